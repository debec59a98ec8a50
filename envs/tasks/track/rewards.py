"""Reward terms of the motion-tracking task, each a small function of the step's ``Context``.

Every tracking term is ``exp(-error / sigma)``, its error the step's squared error (``errors.py``) and its sigma
the field of the same name in ``TrackRewardParams``; ``action_rate`` is a penalty. A term's weight is the field of
its name in ``TrackRewardScales`` (zero switches it off); ``TERMS.check`` makes sure weights and terms agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.reward_terms import RewardTerms
from envs.tasks.track.config import TrackRewardParams
from envs.tasks.track.errors import Errors


@dataclass(frozen=True)
class Context:
    """What a reward term may read after a step (``[N, ...]`` tensors on the env device)."""

    e: Errors
    """The step's tracking errors."""
    actions: torch.Tensor
    """This step's clipped actions ``[N, J]``."""
    last_actions: torch.Tensor
    """The previous step's ``[N, J]`` (zero after a reset)."""
    sigma: TrackRewardParams
    """Kernel widths."""


TERMS = RewardTerms[Context]()
"""The tracking task's reward terms, in definition order."""


@TERMS.add
def anchor_pos(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.anchor_pos / x.sigma.anchor_pos)


@TERMS.add
def anchor_ori(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.anchor_ori / x.sigma.anchor_ori)


@TERMS.add
def body_pos(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.body_pos / x.sigma.body_pos)


@TERMS.add
def body_ori(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.body_ori / x.sigma.body_ori)


@TERMS.add
def body_lin_vel(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.body_lin_vel / x.sigma.body_lin_vel)


@TERMS.add
def body_ang_vel(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.body_ang_vel / x.sigma.body_ang_vel)


@TERMS.add
def joint_pos(x: Context) -> torch.Tensor:
    return torch.exp(-x.e.joint_pos / x.sigma.joint_pos)


@TERMS.add
def action_rate(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.actions - x.last_actions), dim=1)
