"""Reward terms of the reaching task, each a small function of the step's ``Context``.

A term is registered under its own name with ``@term``; its weight is the field of that name in
``ReachRewardScales`` (``config.py``; zero switches it off). ``check_weights`` (shared with locomotion) makes
sure weights and terms name the same set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from envs.tasks.reach.config import ReachRewardParams


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


Term = Callable[[Context], torch.Tensor]
TERMS: dict[str, Term] = {}
"""Reward term name -> its function (filled by ``@term``, in definition order)."""


def term(fn: Term) -> Term:
    """Register ``fn`` as the reward term of its own name."""
    TERMS[fn.__name__] = fn
    return fn


@term
def reach(x: Context) -> torch.Tensor:
    return torch.exp(-torch.square(x.distance) / x.params.reach_sigma)


@term
def reach_fine(x: Context) -> torch.Tensor:
    return torch.exp(-torch.square(x.distance) / x.params.fine_sigma)


@term
def action_rate(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.actions - x.last_actions), dim=1)


@term
def joint_vel(x: Context) -> torch.Tensor:
    return torch.sum(torch.square(x.joint_vel), dim=1)


def weighted(weights: Mapping[str, float], x: Context) -> dict[str, torch.Tensor]:
    """Each switched-on term times its weight (``weights``: already times the control period)."""
    return {name: w * TERMS[name](x) for name, w in weights.items()}
