"""A reaching step's quantities: the view of a readout (its fingertip), the measure, the reward context, the speed
bound and the state a step leaves (parts of ``envs/tasks/parts.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import torch

from envs.physics.base import PhysicsReadout
from envs.tasks.reach import rewards
from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.state import ReachState

WRITES = ("last_actions",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


class View:
    """A readout with its fingertip, computed once (the reward's distance and the observation read it)."""

    def __init__(self, r: PhysicsReadout, tip: Callable[[torch.Tensor], torch.Tensor]):
        self.r, self._tip = r, tip

    @cached_property
    def tip(self) -> torch.Tensor:
        """Fingertip positions ``[N, 3]`` (world, m)."""
        return self._tip(self.r.qpos)


@dataclass(frozen=True)
class Measured:
    """What the parts of one reaching step share."""

    joint_vel: torch.Tensor
    """``[N, J]`` rad/s."""
    distance: torch.Tensor
    """Fingertip to target ``[N]`` (m)."""


class Measure:
    """The step's quantities of the arm (``dof``: the joints' velocity columns) against ``state``'s targets."""

    def __init__(self, cfg: ReachEnvConfig, state: ReachState, tip: Callable[[torch.Tensor], torch.Tensor],
                 dof: slice | torch.Tensor):
        self.cfg, self.state, self.tip, self.dof = cfg, state, tip, dof

    def view(self, r: PhysicsReadout) -> View:
        return View(r, self.tip)

    def measure(self, v: View, actions: torch.Tensor) -> Measured:
        return Measured(v.r.qvel[:, self.dof], torch.norm(self.state.target - v.tip, dim=1))

    def reward_context(self, q: Measured, actions: torch.Tensor) -> rewards.Context:
        return rewards.Context(distance=q.distance, actions=actions, last_actions=self.state.last_actions,
                               joint_vel=q.joint_vel, params=self.cfg.reward_params)

    def too_fast(self, qvel: torch.Tensor) -> torch.Tensor:
        """A joint faster than ``max_joint_vel`` (NaN fails the ``<=`` too)."""
        return ~(qvel.abs() <= self.cfg.max_joint_vel).all(1)

    def after_step(self, q: Measured, actions: torch.Tensor) -> None:
        self.state.last_actions = actions
