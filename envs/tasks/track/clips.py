"""The clips a tracking run plays, from its config: files of any format ``envs/motion/formats.py`` reads, or
``keyframes:NAME`` (a preset of ``envs/motion/keyframes.py`` made for the robot), each checked against the
robot's joints by name, checked for plausibility (``envs/motion/plausible.py``) and resampled to the control rate.

The columns of the formats that do not name their joints (LAFAN1 .csv, mjlab .npz) are the robot file's hinge and
slide joints in its order, welded ones included: a welded joint the clip holds at its welded pose is left out;
one it moves is a one-line error saying how to release it (``env.release_welded``, ``envs/tasks/track/robot.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from contract.errors import UserError
from contract.motion import Clip, digest
from envs.motion import formats, plausible
from envs.motion.keyframes import PRESETS, make_clip
from envs.motion.replay import model_joints
from envs.motion.resample import resample
from envs.motion.robot import drop_welded, file_joints, moved_welded, welded_names
from envs.robots.resolved import ResolvedRobot

KEYFRAMES = "keyframes:"
"""Prefix of a clip made from a keyframe preset."""


@dataclass(frozen=True)
class Played:
    """One clip of the run."""

    source: str
    """As the config names it."""
    sha256: str
    """``contract.motion.digest`` of the clip as read (before resampling)."""
    clip: Clip
    """The clip at the control rate."""


def load_clips(sources: tuple[str, ...], robot: ResolvedRobot, fps: float, csv_fps: float,
               check: bool = True) -> list[Played]:
    """Every clip of ``sources`` for ``robot`` at ``fps``; one line for none, an unknown preset, a file error or
    (``check``) an implausible clip."""
    if not sources:
        raise UserError("config error: env.clips is empty; give one or more motion clips (.npz, .csv or "
                        f"keyframes:NAME, NAME one of {', '.join(PRESETS)}; docs/motion.md)")
    _, joints = model_joints(robot.model, f"robot {robot.spec.name}")
    model_order = tuple(robot.model.joint(j).name for j in joints)
    file_order = file_joints(robot.spec.mjcf)
    welded = welded_names(robot.spec, file_order)
    out = []
    for source in sources:
        if source.startswith(KEYFRAMES):
            name = source[len(KEYFRAMES):]
            if name not in PRESETS:
                raise UserError(f"config error: env.clips entry {source!r}: no keyframe preset {name!r}; presets: "
                                f"{', '.join(PRESETS)}")
            clip = make_clip(PRESETS[name], robot)
        else:
            clip = without_welded(formats.load(source, file_order, csv_fps), welded, robot.spec.name,
                                  f"motion clip {source}")
            if check:
                plausible.check(clip, f"motion clip {source}", plausible.joint_ranges(robot, model_order),
                                plausible.speed_limits(robot), csv_fps)
        formats.columns_for(clip, model_order, f"motion clip {source}")
        out.append(Played(source, digest(clip), resample(clip, fps)))
    return out


def without_welded(clip: Clip, welded: dict[str, float], robot: str, where: str) -> Clip:
    """``clip`` without the columns of the robot's ``welded`` joints it holds at their welded angle; one line for
    welded joints it moves."""
    moved = moved_welded(clip, welded)
    if moved:
        raise UserError(f"{where}: the clip moves {len(moved)} joint(s) that robot {robot}'s spec welds "
                        f"({', '.join(moved)}); release them: env.release_welded=true trains them, or remove them "
                        "from the spec's welded=... (python -m tools.new_robot welds hand / wrist / finger joints)")
    return drop_welded(clip, welded)
