"""The reaching task's observation, as one table (``envs/tasks/observations.py``).

``TABLE`` lists the terms in order; ``values`` gives each term's raw value. The layout, the noise vector and the
exported ``obs_layout`` / ``obs_scales`` derive from ``TABLE``; sim2sim (``deploy/sim2sim_reach.py``) rebuilds
each term by its exported name. Positions are in the frame of the arm's fixed base body.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.obs_table import ObsTerm, declared
from envs.tasks.observations import ObservationLayout
from envs.tasks.reach.state import ReachState
from envs.tasks.reach.step import View
from rl_core.env_api import Obs

TABLE = declared((
    ObsTerm("joint_pos", "joints", 1.0, "noise.joint_pos"),
    ObsTerm("joint_vel", "joints", 0.1, "noise.joint_vel"),
    ObsTerm("target_pos", 3, 2.0, "noise.target"),
    ObsTerm("to_target", 3, 5.0, "noise.target"),
    ObsTerm("last_actions", "joints", 1.0),
))
"""The policy's observation terms in order."""
TERM_NAMES = tuple(t.name for t in TABLE)


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


def values(joint_pos: torch.Tensor, joint_vel: torch.Tensor, default: torch.Tensor, target: torch.Tensor,
           tip: torch.Tensor, last_actions: torch.Tensor, frame: Frame) -> dict[str, torch.Tensor]:
    """Each term's raw value (``[N, size]``; world positions ``target`` and fingertip ``tip``)."""
    return {"joint_pos": joint_pos - default, "joint_vel": joint_vel, "target_pos": frame.of(target),
            "to_target": frame.vector(target - tip), "last_actions": last_actions}


class Observer:
    """The policy's observation of a view (``parts.Observe``): ``qpos`` / ``dof`` the joints' columns, ``default``
    the default pose, the noise drawn from ``generator`` for all ``num_envs`` envs."""

    def __init__(self, layout: ObservationLayout, state: ReachState, columns: tuple[slice | torch.Tensor, ...],
                 default: torch.Tensor, frame: Frame, generator: torch.Generator, num_envs: int):
        self.layout, self.state, (self.qpos, self.dof) = layout, state, columns
        self.default, self.frame, self.generator, self.num_envs = default, frame, generator, num_envs

    def __call__(self, v: View, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        """The (noisy) policy observation, non-finite values replaced by 0, and with ``check`` ``[N]`` bool: it
        was non-finite."""
        state, r = self.state, v.r
        target, last = (state.target, state.last_actions) if rows is None else (state.target[rows],
                                                                                 state.last_actions[rows])
        raw = values(r.qpos[:, self.qpos], r.qvel[:, self.dof], self.default, target, v.tip, last, self.frame)
        obs = self.layout.noisy(self.layout.exact(raw), self.generator, self.num_envs, rows)
        bad = ~torch.isfinite(obs).all(dim=1) if check else None
        return {"policy": torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)}, bad
