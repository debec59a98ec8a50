"""When an episode ends: a fall (terminated), a diverged simulation (terminated, not learned from), a time-out
or the generated terrain's edge (truncated, bootstrapped)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from envs.physics.base import PhysicsReadout
from envs.tasks.bounds import SpeedBounds
from envs.tasks.locomotion.step import Addresses, Step
from envs.tasks.locomotion_config import LocomotionEnvConfig

MAX_SANE_QVEL = 1e3
"""A generalized velocity beyond this (m/s or rad/s) means the simulation has diverged (any robot; each robot
also has tighter bounds derived from its size, ``envs/tasks/bounds.py``)."""


@dataclass(frozen=True)
class Judge:
    """The task's termination rules for one robot (speed bounds resolved to columns)."""

    cfg: LocomotionEnvConfig
    bounds: SpeedBounds
    joint_bound: torch.Tensor
    """Each trained joint's speed bound ``[J]`` (rad/s)."""
    adr: Addresses
    """Where the base and joint velocities are in ``qvel``."""
    nv: int
    """Degrees of freedom (the width of ``qvel``)."""
    dof_bound: torch.Tensor = field(init=False)
    """Per degree of freedom the speed no world exceeds ``[nv]``: ``MAX_SANE_QVEL``, for a trained joint its own
    bound if lower (the base's speeds have their own bounds on top)."""

    def __post_init__(self) -> None:
        # the joint bounds' own dtype (float64 for a robot file's numpy bounds): compared as before, not rounded
        bound = torch.full((self.nv,), MAX_SANE_QVEL, dtype=self.joint_bound.dtype, device=self.joint_bound.device)
        bound[self.adr.joint_dof] = self.joint_bound.clamp(max=MAX_SANE_QVEL)
        object.__setattr__(self, "dof_bound", bound)

    def diverged(self, s: Step, reward: torch.Tensor) -> torch.Tensor:
        """``[N]`` bool: a non-finite state, a speed beyond ``MAX_SANE_QVEL`` or the robot's bounds, a non-finite
        reward or the backend's own alarm (the observation's own check comes later). One pass over ``qvel`` for
        every per-dof bound (NaN fails the ``<=``)."""
        r: PhysicsReadout = s.r
        b, adr = self.bounds, self.adr
        sane = torch.isfinite(r.qpos).all(1) & (r.qvel.abs() <= self.dof_bound).all(1)
        lin = r.qvel[:, adr.base_linvel].norm(dim=1) > b.base_lin_vel
        ang = r.qvel[:, adr.base_angvel].norm(dim=1) > b.base_ang_vel
        out = ~sane | lin | ang | ~torch.isfinite(reward)
        if r.unstable is not None:
            out |= r.unstable.to(reward.device)
        return out

    def beyond_bounds(self, qvel: torch.Tensor) -> torch.Tensor:
        """``[N]`` bool: the base or a joint moves faster than the robot's speed bounds (NaN: False)."""
        b, adr = self.bounds, self.adr
        lin = qvel[:, adr.base_linvel].norm(dim=1) > b.base_lin_vel
        ang = qvel[:, adr.base_angvel].norm(dim=1) > b.base_ang_vel
        return lin | ang | (qvel[:, adr.joint_dof].abs() > self.joint_bound).any(dim=1)

    def fell(self, s: Step, base_height: torch.Tensor) -> torch.Tensor:
        """``[N]`` bool: collisions=feet: the torso tilted beyond ``fall_tilt`` or sank below ``fall_height``;
        full: a forbidden contact (or the base below ``min_base_height``)."""
        cfg = self.cfg
        if cfg.collisions == "feet":  # nothing but the feet touches the floor: judge the torso's pose
            return (s.gravity_b[:, 2] > -math.cos(cfg.fall_tilt)) | (base_height < cfg.fall_height)
        out = (s.forbidden_force > cfg.contact_force_threshold).any(1)
        if cfg.min_base_height > 0:
            out = out | (base_height < cfg.min_base_height)
        return out
