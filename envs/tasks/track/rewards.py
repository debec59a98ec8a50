"""Reward terms of the motion-tracking task, each a small function of the step's ``Context``.

Every tracking term is ``exp(-error / sigma)``, its error the step's squared error (``errors.py``) and its sigma
the field of the same name in ``TrackRewardParams``; ``action_rate`` is a penalty. A term's weight is the field of
its name in ``TrackRewardScales`` (zero switches it off); ``TERMS.check`` makes sure weights and terms agree.
"""

from __future__ import annotations

from collections.abc import Callable
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


KERNEL_TERMS = ("anchor_pos", "anchor_ori", "body_pos", "body_ori", "body_lin_vel", "body_ang_vel", "joint_pos")
"""The ``exp(-error / sigma)`` terms: each reads the error and the sigma of its own name."""


def _kernel(name: str) -> Callable[[Context], torch.Tensor]:
    """The term ``name``: ``exp(-e.<name> / sigma.<name>)``."""
    def term(x: Context) -> torch.Tensor:
        return torch.exp(-getattr(x.e, name) / getattr(x.sigma, name))

    term.__name__ = term.__qualname__ = name
    return term


for _name in KERNEL_TERMS:
    TERMS.add(_kernel(_name))


@TERMS.add
def action_rate(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.actions - x.last_actions), dim=1)
