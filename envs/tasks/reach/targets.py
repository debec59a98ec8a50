"""Targets of the reaching task: uniform draws in a spherical shell sector around the shoulder."""

from __future__ import annotations

from collections.abc import Callable

import torch

from envs.tasks.reach.config import TargetConfig
from envs.tasks.reach.state import ReachState

WRITES = ("target",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""

Uniform = Callable[[tuple[int, ...], float, float], torch.Tensor]
"""``MujocoTask._uniform``: draws from the task's generator."""


class Targets:
    """Draws new targets for masked envs (all envs are drawn, so the random stream does not depend on the mask)."""

    def __init__(self, cfg: TargetConfig, shoulder: tuple[float, float, float], uniform: Uniform,
                 device: torch.device):
        self.cfg, self.uniform = cfg, uniform
        self.shoulder = torch.tensor(shoulder, dtype=torch.float32, device=device)

    def draw(self, n: int) -> torch.Tensor:
        """``n`` targets ``[n, 3]`` (world, m)."""
        c = self.cfg
        r = self.uniform((n,), *c.radius)
        az = self.uniform((n,), *c.azimuth)
        el = self.uniform((n,), *c.elevation)
        flat = r * torch.cos(el)
        point = torch.stack([flat * torch.cos(az), flat * torch.sin(az), r * torch.sin(el)], dim=1) + self.shoulder
        point[:, 2].clamp_(min=c.min_height)
        return point

    def sample(self, state: ReachState, mask: torch.Tensor) -> None:
        """New targets for the masked envs (fixed shapes, no host sync)."""
        state.target = torch.where(mask.unsqueeze(1), self.draw(mask.shape[0]), state.target)
