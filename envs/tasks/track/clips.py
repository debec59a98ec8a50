"""The clips a tracking run plays, from its config: files of any format ``envs/motion/formats.py`` reads, or
``keyframes:NAME`` (a preset of ``envs/motion/keyframes.py`` made for the robot), each checked against the
robot's joints by name and resampled to the control rate."""

from __future__ import annotations

from dataclasses import dataclass

from contract.errors import UserError
from contract.motion import Clip, digest
from envs.motion import formats
from envs.motion.keyframes import PRESETS, make_clip
from envs.motion.replay import model_joints
from envs.motion.resample import resample
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


def load_clips(sources: tuple[str, ...], robot: ResolvedRobot, fps: float, csv_fps: float) -> list[Played]:
    """Every clip of ``sources`` for ``robot`` at ``fps``; one line for none, an unknown preset, or a file error."""
    if not sources:
        raise UserError("config error: env.clips is empty; give one or more motion clips (.npz, .csv or "
                        f"keyframes:NAME, NAME one of {', '.join(PRESETS)}; docs/motion.md)")
    _, joints = model_joints(robot.model, f"robot {robot.spec.name}")
    file_order = tuple(robot.model.joint(j).name for j in joints)
    out = []
    for source in sources:
        if source.startswith(KEYFRAMES):
            name = source[len(KEYFRAMES):]
            if name not in PRESETS:
                raise UserError(f"config error: env.clips entry {source!r}: no keyframe preset {name!r}; presets: "
                                f"{', '.join(PRESETS)}")
            clip = make_clip(PRESETS[name], robot)
        else:
            clip = formats.load(source, file_order, csv_fps)
        formats.columns_for(clip, file_order, f"motion clip {source}")
        out.append(Played(source, digest(clip), resample(clip, fps)))
    return out
