"""Reward terms of the reaching task, each a small function of the step's ``Context``.

A term is registered under its own name with ``@TERMS.add`` (``envs/tasks/reward_terms.py``); its weight is the
field of that name in ``ReachRewardScales`` (``config.py``; zero switches it off); ``TERMS.check`` makes sure
weights and terms name the same set. A new reward is one function here and one weight there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.reach.config import ReachRewardParams
from envs.tasks.reward_terms import RewardTerms


@dataclass(frozen=True)
class Context:
    """What a reward term may read after a step (``[N, ...]`` tensors on the env device)."""

    distance: torch.Tensor
    """Fingertip-to-target distance ``[N]`` (m)."""
    actions: torch.Tensor
    """This step's clipped actions ``[N, J]``."""
    last_actions: torch.Tensor
    """The previous step's clipped actions ``[N, J]`` (zero after a reset)."""
    joint_vel: torch.Tensor
    """Joint velocities ``[N, J]`` (rad/s)."""
    params: ReachRewardParams
    """Kernel widths."""


TERMS = RewardTerms[Context]()
"""The reaching task's reward terms, in definition order."""


@TERMS.add
def reach(x: Context) -> torch.Tensor:
    return torch.exp(-torch.square(x.distance) / x.params.reach_sigma)


@TERMS.add
def reach_fine(x: Context) -> torch.Tensor:
    return torch.exp(-torch.square(x.distance) / x.params.fine_sigma)


@TERMS.add
def action_rate(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.actions - x.last_actions), dim=1)


@TERMS.add
def joint_vel(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.joint_vel), dim=1)

