"""Resets of the velocity-tracking task and what acts around them: a reset env's randomized start and new
commands, pushes of the envs that go on, the terrain curriculum (parts of ``envs/tasks/parts.py``)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from envs.physics.base import Physics
from envs.tasks.locomotion.commands import Commands
from envs.tasks.locomotion.measure import Measured
from envs.tasks.locomotion.randomization import Randomizer
from envs.tasks.locomotion.state import LocomotionState
from envs.terrain.ground import Ground


class Resets:
    """Resets ``physics`` and ``state`` (``randomizer``, ``commands``), pushes every ``push_steps`` (0: never) and
    moves the terrain levels of ``ground`` (episodes of ``episode_s`` seconds); ``needed``: ``MujocoTask._needed``."""

    def __init__(self, physics: Physics, state: LocomotionState, ground: Ground, randomizer: Randomizer,
                 commands: Commands, push_steps: int, episode_s: float, needed: Callable[[torch.Tensor], bool]):
        self.physics, self.state, self.ground, self.randomizer = physics, state, ground, randomizer
        self.commands, self.push_steps, self.episode_s, self.needed = commands, push_steps, episode_s, needed

    def reset(self, mask: torch.Tensor) -> None:
        """Fresh randomized state, model parameters and commands for the masked envs (fixed shapes, no sync);
        their next observation is the first of their new episode."""
        self.randomizer.reset(self.physics, self.ground, self.state, mask)
        self.commands.sample(self.state, mask)
        self.state.clear(mask)

    def resample(self, q: Measured, mask: torch.Tensor) -> None:
        """New commands for the envs that go on."""
        self.commands.sample(self.state, mask)

    def before_reset(self, q: Measured, done: torch.Tensor) -> None:
        """Each control step before the resets: the hardware ramp's count, then the pushes."""
        self.randomizer.advance()
        self.push(q, done)

    def push(self, q: Measured, done: torch.Tensor) -> None:
        """Every ``push_steps`` a random push of the envs that go on (takes effect during the next step)."""
        if not self.push_steps:
            return
        push = (self.state.episode_length % self.push_steps == 0) & ~done
        if self.needed(push):
            self.randomizer.push(self.physics, q.s.r.qvel, push)

    def update_levels(self, q: Measured, ended: torch.Tensor) -> None:
        """The terrain curriculum of the episodes that ended validly."""
        self.ground.update_levels(ended, q.s.base_xy, q.commands, self.episode_s)
