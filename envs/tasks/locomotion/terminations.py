"""When a velocity-tracking episode ends: a fall (terminated) or a speed beyond the robot's bounds (the robot's
part of the shared divergence test, ``diverged_worlds`` in ``envs/tasks/base.py``: terminated, not learned from);
the time-out and the generated terrain's edge (truncated, bootstrapped) are the base's recipe and
``Ground.outside``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from envs.tasks.bounds import SpeedBounds, every
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.measure import Measured
from envs.tasks.locomotion.step import Addresses, Step
from envs.terrain.ground import Ground

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

    def too_fast(self, qvel: torch.Tensor) -> torch.Tensor:
        """``[N]`` bool: a speed beyond ``MAX_SANE_QVEL`` or the robot's bounds, or a non-finite one (the family's
        part of the shared divergence test, ``diverged_worlds`` in ``envs/tasks/base.py``). One pass over ``qvel``
        for every per-dof bound (NaN fails the ``<=``), the base's speed norms on top."""
        b, adr = self.bounds, self.adr
        lin = qvel[:, adr.base_linvel].norm(dim=1) > b.base_lin_vel
        ang = qvel[:, adr.base_angvel].norm(dim=1) > b.base_ang_vel
        return ~every(qvel.abs() <= self.dof_bound) | lin | ang

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


class Ends:
    """The family's episode ends of a step's quantities (``parts.Termination`` functions)."""

    def __init__(self, judge: Judge, ground: Ground):
        self.judge, self.ground = judge, ground

    def fell(self, q: Measured) -> torch.Tensor:
        """A fall (``Judge.fell``): terminated."""
        return self.judge.fell(q.s, q.base_height)

    def at_the_edge(self, q: Measured) -> torch.Tensor:
        """A robot about to walk off the generated terrain's edge (bootstrapped like a time-out)."""
        return self.ground.outside(q.s.base_xy)
