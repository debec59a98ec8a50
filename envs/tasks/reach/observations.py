"""The reaching task's observation, as one table (``envs/tasks/observations.py``).

``TABLE`` lists the terms in order, each with its raw value from ``Inputs``. The layout, the noise vector and the
exported ``obs_layout`` / ``obs_scales`` derive from ``TABLE``; sim2sim (``deploy/sim2sim_reach.py``) rebuilds
each term by its exported name. Positions are in the frame of the arm's fixed base body.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.obs_table import ObsTerm, declared
from envs.tasks.observations import ObservationLayout
from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.state import ReachState
from envs.tasks.reach.step import View
from rl_core.env_api import Obs


@dataclass(frozen=True)
class Frame:
    """The base's frame: world positions are observed as ``rot^T (x - origin)``."""

    origin: torch.Tensor
    """Base body position ``[3]`` (world, m)."""
    rot: torch.Tensor
    """Base body orientation ``[3, 3]`` (base to world)."""

    def of(self, x: torch.Tensor) -> torch.Tensor:
        """World points ``[N, 3]`` in the base frame."""
        return (x - self.origin) @ self.rot

    def vector(self, v: torch.Tensor) -> torch.Tensor:
        """World vectors ``[N, 3]`` in the base frame."""
        return v @ self.rot


@dataclass(frozen=True)
class Inputs:
    """What the terms read (``[N, ...]``; world positions ``target`` and fingertip ``tip``)."""

    joint_pos: torch.Tensor
    joint_vel: torch.Tensor
    default: torch.Tensor
    """The default pose ``[J]`` (``joint_pos`` is observed relative to it)."""
    target: torch.Tensor
    tip: torch.Tensor
    last_actions: torch.Tensor
    frame: Frame


Row = ObsTerm[Inputs, None, ReachEnvConfig]
"""A row of this family's table (no bounds: a non-finite value is the only divergence it checks)."""
TABLE: tuple[Row, ...] = declared((
    Row("joint_pos", "joints", 1.0, value=lambda x: x.joint_pos - x.default, noise=lambda c: c.noise.joint_pos),
    Row("joint_vel", "joints", 0.1, value=lambda x: x.joint_vel, noise=lambda c: c.noise.joint_vel),
    Row("target_pos", 3, 2.0, value=lambda x: x.frame.of(x.target), noise=lambda c: c.noise.target),
    Row("to_target", 3, 5.0, value=lambda x: x.frame.vector(x.target - x.tip), noise=lambda c: c.noise.target),
    Row("last_actions", "joints", 1.0, value=lambda x: x.last_actions),
))
"""The policy's observation terms in order."""
TERM_NAMES = tuple(t.name for t in TABLE)


class Observer:
    """The policy's observation of a view (``parts.Observe``): ``qpos`` / ``dof`` the joints' columns, ``default``
    the default pose, the noise drawn from ``generator`` for all ``num_envs`` envs."""

    def __init__(self, layout: ObservationLayout[Inputs, ReachEnvConfig], state: ReachState,
                 columns: tuple[slice | torch.Tensor, ...], default: torch.Tensor, frame: Frame,
                 generator: torch.Generator, num_envs: int):
        self.layout, self.state, (self.qpos, self.dof) = layout, state, columns
        self.default, self.frame, self.generator, self.num_envs = default, frame, generator, num_envs
        self.bound = layout.bounds(None)
        """Every column unbounded: only a non-finite value fails the check."""

    def __call__(self, v: View, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        """The (noisy) policy observation, non-finite values replaced by 0, and with ``check`` ``[N]`` bool: it
        was non-finite."""
        state, r = self.state, v.r
        target, last = (state.target, state.last_actions) if rows is None else (state.target[rows],
                                                                                 state.last_actions[rows])
        x = Inputs(r.qpos[:, self.qpos], r.qvel[:, self.dof], self.default, target, v.tip, last, self.frame)
        _, obs, bad = self.layout.observe(x, self.bound, self.generator, self.num_envs, rows, check)
        return {"policy": obs}, bad
