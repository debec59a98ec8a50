"""Is a clip plausible for a robot? One line each, before training starts (a wrong file trains for an hour into
nothing):

- the first frame's base tilted more than ``TILT_BOUND`` from upright: a quaternion written w x y z read as
  x y z w (or the other way round) turns an upright base upside down;
- a frame rate outside ``FPS_RANGE``, a joint faster than the robot's velocity limit (``DEFAULT_JOINT_SPEED``
  where the robot gives none) or a base faster than ``HUMAN_BASE_SPEED``: the frame rate is likely wrong
  (``csv_fps=120`` on a 30 fps clip plays it four times too fast);
- a joint beyond its range by more than ``RANGE_MARGIN``.

``env.check_clips=false`` skips these checks on a tracking task's clips, ``env.amp_check_clips=false`` on a
locomotion task's AMP clips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from contract.errors import UserError
from contract.motion import Clip, velocities
from envs.robots.resolved import ResolvedRobot

TILT_BOUND = math.radians(60.0)
"""The first frame's base may be tilted this far from upright (rad): a person starts a clip standing, sitting or
lying; an upside-down base is a quaternion convention mix-up."""
FPS_RANGE = (1.0, 2000.0)
"""Plausible frame rates (frames/s): motion capture runs at 30-240."""
DEFAULT_JOINT_SPEED = 60.0
"""rad/s a joint may reach when the robot gives no velocity limit (humanoid motors turn at 20-40 rad/s; a clip
recorded from a policy's rollout may have short faster spikes)."""
HUMAN_BASE_SPEED = 12.5
"""m/s: faster than any human sprints (the record's top speed is about 12.4 m/s)."""
RANGE_MARGIN = 0.1
"""rad (or m) a joint may exceed its range by (retargeting rounds; the physics clips it)."""
CHECKS_OFF = "env.check_clips=false trains on it anyway"


@dataclass(frozen=True)
class Facts:
    """What the checks measure of a clip."""

    tilt: float
    """The first frame's base tilt from upright (rad)."""
    joint_speed: float
    """The fastest joint speed (rad/s, finite differences)."""
    fastest_joint: str
    """Its joint."""
    base_speed: float
    """The fastest base speed (m/s)."""


def facts(clip: Clip) -> Facts:
    """``clip``'s tilt and top speeds."""
    x, y = clip.base_quat[0, 1], clip.base_quat[0, 2]
    tilt = math.acos(float(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0)))
    if clip.frames < 2:
        return Facts(tilt, 0.0, "", 0.0)
    rates = velocities(clip)
    speeds = np.abs(rates.joint_vel).max(axis=0) if clip.joint_pos.shape[1] else np.zeros(0)
    k = int(np.argmax(speeds)) if speeds.size else 0
    return Facts(tilt, float(speeds[k]) if speeds.size else 0.0, clip.joint_names[k] if speeds.size else "",
                 float(np.linalg.norm(rates.base_lin_vel, axis=1).max()))


def check_rate(clip: Clip, where: str, csv_fps: float, fps_key: str = "env.csv_fps") -> None:
    """One line for a frame rate outside ``FPS_RANGE`` (before resampling: 0.001 fps would make millions of
    frames); ``fps_key``: the setting of a .csv clip's frame rate."""
    lo, hi = FPS_RANGE
    if not lo <= clip.fps <= hi:
        raise UserError(f"{where}: {clip.fps:g} frames/s ({clip.frames} frames = {clip.duration:.4g} s) is not a "
                        f"motion capture rate ({lo:g} to {hi:g}); the frame rate is likely wrong (a .csv clip's is "
                        f"{fps_key}={csv_fps:g}; Unitree's LAFAN1 files are 30)")


def joint_ranges(robot: ResolvedRobot, names: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """joint -> (low, high) of the limited ones among ``names`` in ``robot``'s model (``check``'s ``ranges``)."""
    m = robot.model
    return {n: (float(m.joint(n).range[0]), float(m.joint(n).range[1])) for n in names
            if m.jnt_limited[m.joint(n).id]}


def speed_limits(robot: ResolvedRobot) -> dict[str, float]:
    """joint -> velocity limit (rad/s; inf: none given) of ``robot``'s trained joints (``check``'s
    ``speed_limits``)."""
    return dict(zip(robot.joint_names, robot.velocity_limit, strict=True))


def check(clip: Clip, where: str, ranges: Mapping[str, tuple[float, float]], speed_limits: Mapping[str, float],
          csv_fps: float, off: str = CHECKS_OFF, fps_key: str = "env.csv_fps") -> None:
    """One line for the first implausible property of ``clip`` (module docstring); ``ranges``: joint -> (low,
    high) for the limited joints; ``speed_limits``: joint -> rad/s (inf: none given); ``off``: the line's way to
    train on it anyway; ``fps_key``: the setting of a .csv clip's frame rate."""
    check_rate(clip, where, csv_fps, fps_key)
    f = facts(clip)
    if f.tilt > TILT_BOUND:
        raise UserError(f"{where}: the first frame's base is tilted {math.degrees(f.tilt):.0f} degrees from upright "
                        f"(quaternion {np.round(clip.base_quat[0], 3).tolist()} as w x y z); likely a w x y z / "
                        f"x y z w mix-up (a LAFAN1 .csv holds x y z w, an npz w x y z); {off}")
    rate = f"the frame rate is likely wrong ({clip.fps:g} frames/s; a .csv clip's is {fps_key}={csv_fps:g}, " \
           "Unitree's LAFAN1 files are 30)"
    if f.base_speed > HUMAN_BASE_SPEED:
        raise UserError(f"{where}: the base moves at up to {f.base_speed:.1f} m/s, faster than any human "
                        f"({HUMAN_BASE_SPEED:g} m/s); {rate}; {off}")
    speeds = np.abs(velocities(clip).joint_vel).max(axis=0) if clip.frames > 1 else np.zeros(len(clip.joint_names))
    for name, speed in zip(clip.joint_names, speeds.tolist(), strict=True):
        limit = speed_limits.get(name, math.inf)
        limit = DEFAULT_JOINT_SPEED if not math.isfinite(limit) else limit
        if speed > limit:
            raise UserError(f"{where}: joint {name} turns at up to {speed:.0f} rad/s, above the robot's "
                            f"{limit:g} rad/s; {rate}; {off}")
    _check_ranges(clip, where, ranges, off)


def _check_ranges(clip: Clip, where: str, ranges: Mapping[str, tuple[float, float]], off: str) -> None:
    for k, name in enumerate(clip.joint_names):
        if name not in ranges:
            continue
        lo, hi = ranges[name]
        q = clip.joint_pos[:, k]
        over = np.maximum(lo - q, q - hi)
        frame = int(np.argmax(over))
        if over[frame] > RANGE_MARGIN:
            raise UserError(f"{where}: joint {name} is at {q[frame]:.3f} at frame {frame}, outside its range "
                            f"[{lo:.3f}, {hi:.3f}] by {over[frame]:.3f}; is the clip made for this robot (its "
                            f"columns in the robot file's joint order)? {off}")
