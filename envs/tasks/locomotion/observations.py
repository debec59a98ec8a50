"""The velocity-tracking task's observation values and bounds, for the terms of its table (``obs_table.py``).

``values`` gives each term's raw value from a step, ``bounds`` the largest
magnitude each column of the noise-free observation may show in a world within the robot's speed bounds. The
layout, the noise vector, the exported ``obs_layout`` / ``obs_scales``, the mirror and sim2sim's observation all
derive from ``obs_table.TABLE``; ``check`` fails at build time if ``values`` or ``bounds`` miss a term.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from envs.tasks.locomotion.obs_table import OBS_SCALES, TABLE, TERM_NAMES

if TYPE_CHECKING:
    from envs.tasks.locomotion.env import LocomotionEnv
    from envs.tasks.locomotion.step import Step

_S = OBS_SCALES
__all__ = ["OBS_SCALES", "TABLE", "TERM_NAMES", "bounds", "check", "values"]


def values(env: LocomotionEnv, s: Step, rows: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Each term's raw value for the envs of ``s`` (``rows`` of all envs: None for all)."""
    state = env.state

    def own(x: torch.Tensor) -> torch.Tensor:  # task state of the observed envs
        return x if rows is None else x[rows]

    out = {"base_lin_vel": s.lin_vel_b, "base_ang_vel": s.ang_vel_b, "projected_gravity": s.gravity_b,
           "commands": own(state.commands), "joint_pos": s.joint_pos - env.default_joint_pos,
           "joint_vel": s.joint_vel, "last_actions": own(state.last_actions)}
    scan = env.cfg.height_scan
    if scan.enabled:
        heights = env.ground.scan(s.r.qpos[:, env.adr.base_pos], s.yaw) - scan.offset
        out["height_scan"] = heights.clamp(-scan.clip, scan.clip)
    return out


def _joint_ranges(env: LocomotionEnv) -> list[float]:
    model, rb = env.model, env.robot
    out = []
    for adr, default in zip(rb.joint_qpos_adr, rb.default_joint_pos, strict=True):
        jnt = int(np.nonzero(model.jnt_qposadr == adr)[0][0])
        lo, hi = model.jnt_range[jnt]
        limited = bool(model.jnt_limited[jnt]) and lo < hi
        out.append(max(abs(lo - default), abs(hi - default)) + 1.0 if limited else math.inf)
    return out


BOUNDS: dict[str, Callable[[LocomotionEnv, int], list[float]]] = {
    "base_lin_vel": lambda env, n: [env.bounds.base_lin_vel * _S["lin_vel"]] * n,
    "base_ang_vel": lambda env, n: [env.bounds.base_ang_vel * _S["ang_vel"]] * n,
    "projected_gravity": lambda env, n: [1.0] * n,
    "commands": lambda env, n: [max(abs(v) for v in env.cfg.commands.lin_vel_x) * _S["lin_vel"],
                                max(abs(v) for v in env.cfg.commands.lin_vel_y) * _S["lin_vel"],
                                max(abs(v) for v in env.cfg.commands.yaw_rate) * _S["ang_vel"]],
    "joint_pos": lambda env, n: _joint_ranges(env),  # + 1 rad: soft limits give
    "joint_vel": lambda env, n: [v * _S["joint_vel"] for v in env.bounds.joint_vel],
    "last_actions": lambda env, n: [env.cfg.clip_actions] * n,
    "height_scan": lambda env, n: [env.cfg.height_scan.clip * _S["height_scan"]] * n,
}
"""Per term: the largest magnitude of each of its noise-free columns in a world within the speed bounds."""


def bounds(env: LocomotionEnv) -> torch.Tensor:
    """The bound of each column of the full noise-free observation (a world beyond it has diverged), finite."""
    bound = [v for name, n in env.obs.full for v in BOUNDS[name](env, n)]
    finite = torch.finfo(torch.float32).max  # an unlimited column: any finite value (inf and NaN fail the check)
    return (torch.tensor(bound, dtype=torch.float32, device=env.device) * (1.0 + 1e-4)).clamp(max=finite)


def check() -> None:
    """Every term of ``TABLE`` has a bound (values are checked at the first observation, by name)."""
    missing = [name for name in TERM_NAMES if name not in BOUNDS]
    if missing:
        raise ValueError(f"observation terms without a bound: {', '.join(missing)}")
