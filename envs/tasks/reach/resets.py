"""Resets and targets of the reaching task: a reset env starts near the default pose at rest with a new target;
envs that go on get new targets every ``targets.resample_s`` (parts of ``envs/tasks/parts.py``)."""

from __future__ import annotations

import torch

from envs.physics.base import Physics
from envs.tasks.reach.state import ReachState
from envs.tasks.reach.step import Measured
from envs.tasks.reach.targets import Targets, Uniform


class Resets:
    """Resets ``physics`` and ``state`` (``joints``: the joints' qpos columns; ``low`` / ``high``: their range)."""

    def __init__(self, physics: Physics, state: ReachState, targets: Targets, uniform: Uniform, init_noise: float,
                 pose: torch.Tensor, qpos0: torch.Tensor, joints: slice | torch.Tensor,
                 limits: tuple[torch.Tensor, torch.Tensor], nv: int):
        self.physics, self.state, self.targets, self.uniform = physics, state, targets, uniform
        self.init_noise, self.pose, self.qpos0, self.joints, self.limits, self.nv = (
            init_noise, pose, qpos0, joints, limits, nv)

    def reset(self, mask: torch.Tensor) -> None:
        """The masked envs start near the default pose, at rest, with a new target (fixed shapes, no sync)."""
        n, noise, (low, high) = mask.shape[0], self.init_noise, self.limits
        qpos = self.qpos0.expand(n, -1).clone()
        joints = self.pose + self.uniform((n, self.pose.shape[0]), -noise, noise)
        qpos[:, self.joints] = torch.maximum(torch.minimum(joints, high), low)
        self.physics.reset(mask, qpos, torch.zeros(n, self.nv, device=qpos.device))
        self.targets.sample(self.state, mask)
        self.state.clear(mask)

    def resample(self, q: Measured, mask: torch.Tensor) -> None:
        """New targets for the envs that go on: the observation shows them (a done env's final observation keeps
        the target it was tracking)."""
        self.targets.sample(self.state, mask)
