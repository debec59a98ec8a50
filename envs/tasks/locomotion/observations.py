"""The velocity-tracking task's observation, as one table (``envs/tasks/observations.py``).

``TABLE`` lists the terms in order; ``values`` gives each term's raw value from a step, ``bounds`` the largest
magnitude each column of the noise-free observation may show in a world within the robot's speed bounds. The
layout, the noise vector, the exported ``obs_layout`` / ``obs_scales``, the mirror and sim2sim's observation all
derive from ``TABLE``; ``check`` fails at build time if ``values`` or ``bounds`` miss a term.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from envs.tasks.observations import ObsTerm
from envs.tasks.rotations import yaw_of

if TYPE_CHECKING:
    from envs.tasks.locomotion.env import LocomotionEnv
    from envs.tasks.locomotion.step import Step

OBS_SCALES = {"lin_vel": 2.0, "ang_vel": 0.25, "joint_pos": 1.0, "joint_vel": 0.05, "height_scan": 5.0}
"""Observation scales (legged_gym); the commands use the matching lin_vel / ang_vel scales. They keep every term
near [-1, 1] for policies without an observation normalizer (``policy.normalize_obs=false``, legged_gym's way)."""

_S = OBS_SCALES
TABLE = (
    ObsTerm("base_lin_vel", 3, _S["lin_vel"], "noise.lin_vel", mirror="vector",
            doc="base linear velocity, base frame (m/s)"),
    ObsTerm("base_ang_vel", 3, _S["ang_vel"], "noise.ang_vel", mirror="axial",
            doc="base angular velocity, base frame (rad/s)"),
    ObsTerm("projected_gravity", 3, 1.0, "noise.gravity", mirror="vector",
            doc="unit gravity direction in the base frame"),
    ObsTerm("commands", 3, (_S["lin_vel"], _S["lin_vel"], _S["ang_vel"]), mirror="command",
            doc="velocity command: vx, vy (m/s, base frame), yaw rate (rad/s)"),
    ObsTerm("joint_pos", "joints", _S["joint_pos"], "noise.joint_pos", mirror="joints",
            doc="trained joints' angles minus the default pose (rad), policy joint order"),
    ObsTerm("joint_vel", "joints", _S["joint_vel"], "noise.joint_vel", mirror="joints",
            doc="trained joints' velocities (rad/s)"),
    ObsTerm("last_actions", "joints", 1.0, mirror="joints", doc="the previous step's clipped actions"),
    ObsTerm("height_scan", "scan", _S["height_scan"], "height_scan.noise", clip="height_scan.clip",
            doc="base height above the ground at each scan point minus the offset (m), clipped"),
)
"""The policy's observation terms in order (``height_scan`` only when ``env.height_scan.enabled``)."""
TERM_NAMES = tuple(t.name for t in TABLE)
"""The terms' names in order."""


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
        heights = env.ground.scan(s.r.qpos[:, env.adr.base_pos], yaw_of(s.base_quat)) - scan.offset
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
    """The bound of each column of the full noise-free observation (a world beyond it has diverged)."""
    bound = [v for name, n in env.obs.full for v in BOUNDS[name](env, n)]
    return torch.tensor(bound, dtype=torch.float32, device=env.device) * (1.0 + 1e-4)


def check() -> None:
    """Every term of ``TABLE`` has a bound (values are checked at the first observation, by name)."""
    missing = [name for name in TERM_NAMES if name not in BOUNDS]
    if missing:
        raise ValueError(f"observation terms without a bound: {', '.join(missing)}")
