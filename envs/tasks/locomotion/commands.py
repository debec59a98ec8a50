"""Velocity commands: drawn per env, resampled, steered towards a heading, or held by an interactive viewer."""

from __future__ import annotations

import math

import torch

from contract import breakdown
from envs.tasks.locomotion.config import CommandConfig
from envs.tasks.locomotion.state import LocomotionState

WRITES = ("commands", "heading")
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""

COMMANDS = ("lin_vel_x", "lin_vel_y", "yaw_rate")
"""Command components in order (body-frame m/s, m/s, rad/s)."""


class Commands:
    """Draws the commands of ``state`` with the task's generator (fixed shapes, no host sync)."""

    def __init__(self, cfg: CommandConfig, generator: torch.Generator, device: torch.device):
        self.cfg, self.generator, self.device = cfg, generator, device
        self.held: tuple[torch.Tensor, torch.Tensor] | None = None
        """``hold``: (commands [N, 3], heading [N]) every env tracks, or None."""
        self.breakdown_edges = {name: breakdown.edges(*getattr(cfg, name)) for name in COMMANDS}
        """Bin edges of each component, for the evaluator's per-command metrics."""

    def _uniform(self, n: int, low: float, high: float) -> torch.Tensor:
        return torch.rand((n,), generator=self.generator, device=self.device) * (high - low) + low

    def sample(self, state: LocomotionState, mask: torch.Tensor) -> None:
        """New commands (and headings) for the masked envs."""
        c, n = self.cfg, state.commands.shape[0]
        new = torch.stack([self._uniform(n, *c.lin_vel_x), self._uniform(n, *c.lin_vel_y),
                           self._uniform(n, *c.yaw_rate)], dim=1)
        small = torch.norm(new[:, :2], dim=1) < c.min_lin_vel
        new[:, :2] *= (~small).unsqueeze(1)
        if c.standing_share > 0:  # a config value: no random numbers drawn (and none changed) when it is 0
            new = new * (self._uniform(n, 0.0, 1.0) >= c.standing_share).unsqueeze(1)
        if self.held is not None:  # drawn all the same: the random stream does not depend on the hold
            new = self.held[0]
        state.commands = torch.where(mask.unsqueeze(1), new, state.commands)
        if c.heading:
            heading = self._uniform(n, -math.pi, math.pi)
            state.heading = torch.where(mask, heading if self.held is None else self.held[1], state.heading)

    def steer(self, state: LocomotionState, yaw: torch.Tensor) -> None:
        """commands.heading: this step's yaw-rate command from the heading error (legged_gym); ``yaw``: the base's
        heading ``[N]`` (rad)."""
        c = self.cfg
        error = torch.remainder(state.heading - yaw + math.pi, 2 * math.pi) - math.pi
        yaw_rate = (c.heading_gain * error).clamp(c.yaw_rate[0], c.yaw_rate[1])
        state.commands = torch.cat([state.commands[:, :2], yaw_rate.unsqueeze(1)], dim=1)

    def hold(self, state: LocomotionState, commands: torch.Tensor | None, heading: torch.Tensor | None) -> None:
        """Every env tracks ``commands`` ``[N, 3]`` (and steers towards ``heading``) from now on; None: random."""
        if commands is None:
            self.held = None
            return
        held = commands.to(self.device, torch.float32)
        self.held = (held, state.heading if heading is None else heading.to(self.device, torch.float32))
        state.commands = held.clone()
        state.heading = self.held[1].clone()
