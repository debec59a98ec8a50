"""The robot of a tracking run, from its spec and the run's clips: every joint the clips name trained.

- held joints (a draft holds a waist and arms) are trained, at their held pose as their default;
- welded joints (a draft welds wrists, hands, fingers) that a clip moves are released and trained, at their welded
  pose as their default, driven by a copy of the actuator group of the joint above them (``envs/motion/robot.py``);
  ``env.release_welded=false`` keeps them welded (then such a clip is refused in one line);
- one line says which joints were trained or released (printed once per robot and clip set).

The anchor (``anchor_for``): ``env.anchor_body`` when set, else ``torso_link`` when the robot has a body of that
name (BeyondMimic's and mjlab's anchor on Unitree's humanoids), else the robot's base body.
"""

from __future__ import annotations

import re

from envs.motion import formats
from envs.motion.robot import build_tracking, file_joints, moved_welded, welded_names
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.tasks.track.clips import KEYFRAMES
from envs.tasks.track.config import TrackEnvConfig

TORSO = "torso_link"
"""The anchor body when the robot has one of this name and ``env.anchor_body`` is empty."""
_SAID: set[str] = set()


def released_joints(spec: RobotSpec, cfg: TrackEnvConfig) -> tuple[str, ...]:
    """The welded joints of ``spec`` that ``cfg``'s clip files move (none with ``env.release_welded=false``)."""
    if not cfg.release_welded or not spec.welded:
        return ()
    names = file_joints(spec.mjcf)
    welded = welded_names(spec, names)
    moved: list[str] = []
    for source in cfg.clips:
        if not source.startswith(KEYFRAMES):
            moved += [n for n in moved_welded(formats.load(source, names, cfg.csv_fps), welded) if n not in moved]
    return tuple(n for n in names if n in moved)


def tracking_robot(spec: RobotSpec, cfg: TrackEnvConfig) -> ResolvedRobot:
    """The scene with ``spec``'s robot for ``cfg``'s clips (module docstring)."""
    release = released_joints(spec, cfg)
    robot = build_tracking(spec, cfg.scene_options(), release)
    held = [n for h in spec.held for n in robot.joint_names if _matches(h.joints, n)]
    parts = ([f"{len(held)} held joint(s) trained ({_short(held)})"] if held else []) + (
        [f"{len(release)} welded joint(s) released and trained, the clips move them ({_short(list(release))})"]
        if release else [])
    line = f"tracking {spec.name}: {robot.num_joints} joints trained; " + "; ".join(parts)
    if parts and line not in _SAID:
        _SAID.add(line)
        print(line)
    return robot


def anchor_for(cfg: TrackEnvConfig, robot: ResolvedRobot, bodies: list[str]) -> str:
    """The anchor body's name (module docstring)."""
    if cfg.anchor_body:
        return cfg.anchor_body
    return TORSO if TORSO in bodies else robot.spec.base_body


def _matches(pattern: str, name: str) -> bool:
    return re.fullmatch(pattern, name) is not None


def _short(names: list[str]) -> str:
    return ", ".join(names[:6]) + (f", ... ({len(names) - 6} more)" if len(names) > 6 else "")
