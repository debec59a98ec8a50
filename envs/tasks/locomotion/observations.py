"""The velocity-tracking task's observation values and bounds, for the terms of its table (``obs_table.py``).

``values`` gives each term's raw value from a step, ``bounds`` the largest
magnitude each column of the noise-free observation may show in a world within the robot's speed bounds. The
layout, the noise vector, the exported ``obs_layout`` / ``obs_scales``, the mirror and sim2sim's observation all
derive from ``obs_table.TABLE``; ``check`` fails at build time if ``values`` or ``bounds`` miss a term.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from envs.robots.resolved import ResolvedRobot
from envs.tasks.bounds import SpeedBounds
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.obs_table import OBS_SCALES, TABLE, TERM_NAMES
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.locomotion.step import Step
from envs.tasks.observations import ObservationLayout
from envs.terrain.ground import Ground

_S = OBS_SCALES
__all__ = ["OBS_SCALES", "TABLE", "TERM_NAMES", "Sources", "bounds", "check", "values"]


@dataclass(frozen=True)
class Sources:
    """What the terms read besides the step and the task state (resolved once, with the env)."""

    default_joint_pos: torch.Tensor
    """The standing pose ``[J]`` (``joint_pos`` is observed relative to it)."""
    ground: Ground
    """The ground under the robots (the height scan)."""
    cfg: LocomotionEnvConfig
    """The task's config (``height_scan``)."""


def values(src: Sources, s: Step, state: LocomotionState, rows: torch.Tensor | None = None
           ) -> dict[str, torch.Tensor]:
    """Each term's raw value for the envs of ``s`` (``rows`` of all envs: None for all)."""
    def own(x: torch.Tensor) -> torch.Tensor:  # task state of the observed envs
        return x if rows is None else x[rows]

    out = {"base_lin_vel": s.lin_vel_b, "base_ang_vel": s.ang_vel_b, "projected_gravity": s.gravity_b,
           "commands": own(state.commands), "joint_pos": s.joint_pos - src.default_joint_pos,
           "joint_vel": s.joint_vel, "last_actions": own(state.last_actions)}
    scan = src.cfg.height_scan
    if scan.enabled:
        heights = src.ground.scan(s.r.qpos[:, s.adr.base_pos], s.yaw) - scan.offset
        out["height_scan"] = heights.clamp(-scan.clip, scan.clip)
    return out


@dataclass(frozen=True)
class BoundInputs:
    """What the bounds of the terms are derived from."""

    speed: SpeedBounds
    cfg: LocomotionEnvConfig
    robot: ResolvedRobot


def _joint_ranges(b: BoundInputs) -> list[float]:
    """Per joint: the farthest a limited joint can be from its default angle, + 1 rad (soft limits give)."""
    out = []
    for (lo, hi), default in zip(b.robot.joint_range, b.robot.default_joint_pos, strict=True):
        limited = lo is not None and hi is not None and lo < hi
        out.append(max(abs(lo - default), abs(hi - default)) + 1.0 if limited else math.inf)  # type: ignore[operator]
    return out


BOUNDS: dict[str, Callable[[BoundInputs, int], list[float]]] = {
    "base_lin_vel": lambda b, n: [b.speed.base_lin_vel * _S["lin_vel"]] * n,
    "base_ang_vel": lambda b, n: [b.speed.base_ang_vel * _S["ang_vel"]] * n,
    "projected_gravity": lambda b, n: [1.0] * n,
    "commands": lambda b, n: [max(abs(v) for v in b.cfg.commands.lin_vel_x) * _S["lin_vel"],
                              max(abs(v) for v in b.cfg.commands.lin_vel_y) * _S["lin_vel"],
                              max(abs(v) for v in b.cfg.commands.yaw_rate) * _S["ang_vel"]],
    "joint_pos": lambda b, n: _joint_ranges(b),
    "joint_vel": lambda b, n: [v * _S["joint_vel"] for v in b.speed.joint_vel],
    "last_actions": lambda b, n: [b.cfg.clip_actions] * n,
    "height_scan": lambda b, n: [b.cfg.height_scan.clip * _S["height_scan"]] * n,
}
"""Per term: the largest magnitude of each of its noise-free columns in a world within the speed bounds."""


def bounds(layout: ObservationLayout, b: BoundInputs, device: torch.device) -> torch.Tensor:
    """The bound of each column of the full noise-free observation (a world beyond it has diverged), finite."""
    bound = [v for name, n in layout.full for v in BOUNDS[name](b, n)]
    finite = torch.finfo(torch.float32).max  # an unlimited column: any finite value (inf and NaN fail the check)
    return (torch.tensor(bound, dtype=torch.float32, device=device) * (1.0 + 1e-4)).clamp(max=finite)


def check() -> None:
    """Every term of ``TABLE`` has a bound (values are checked at the first observation, by name)."""
    missing = [name for name in TERM_NAMES if name not in BOUNDS]
    if missing:
        raise ValueError(f"observation terms without a bound: {', '.join(missing)}")
