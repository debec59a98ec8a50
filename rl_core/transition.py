"""One rollout step as an algorithm records it, declared once: its fields are the rollout storage's buffers.

An algorithm fills the fields it learns from and leaves the others None; the storage keeps one ``[T, N, ...]``
buffer per field the first transition of a rollout carried (``rl_core/storage.py``), flattens the ones marked
``minibatch`` into the samples a minibatch gathers, and nothing else needs to know the list.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import torch


def _kept(minibatch: bool = False) -> Any:
    """A field that is None until the algorithm records it; ``minibatch``: the update's minibatches read it."""
    return field(default=None, metadata={"minibatch": minibatch})


@dataclass
class Transition:
    """Step ``t`` of every env (``[N, ...]`` tensors on the policy's device); the done flags describe the
    transition ``t -> t + 1`` (design notes 3.1). ``act`` fills what the policy computed, ``record`` the env's
    answer (``obs``, ``weights`` and the done flags are always recorded)."""

    obs: torch.Tensor | None = _kept(minibatch=True)
    """Normalized policy observations the step acted on."""
    weights: torch.Tensor | None = _kept(minibatch=True)
    """1.0: learn from this transition; 0.0: not (a non-finite value, or the env marked it invalid)."""
    terminated: torch.Tensor | None = _kept()
    """bool: the episode ended in a terminal state (no bootstrap)."""
    truncated: torch.Tensor | None = _kept()
    """bool: the episode was cut (a time limit; bootstrap from ``final_values``)."""
    critic_obs: torch.Tensor | None = _kept(minibatch=True)
    """Normalized critic observations (asymmetric actor-critic only)."""
    actions: torch.Tensor | None = _kept(minibatch=True)
    """The sampled actions (the head's raw sample, before ``env_action``)."""
    log_probs: torch.Tensor | None = _kept(minibatch=True)
    """log pi(action | obs) when sampled."""
    dist_params: torch.Tensor | None = _kept(minibatch=True)
    """The action distribution's parameters when sampled (the KL of the update)."""
    values: torch.Tensor | None = _kept(minibatch=True)
    """V(obs) when sampled."""
    rewards: torch.Tensor | None = _kept()
    """The rewards the algorithm learns from (finite; normalized when ``algorithm.normalize_rewards``)."""
    final_values: torch.Tensor | None = _kept()
    """V(final observation) of the envs truncated this step (0 elsewhere)."""
    teacher_actions: torch.Tensor | None = _kept(minibatch=True)
    """Distillation: the teacher's deterministic action."""
    hidden: torch.Tensor | None = _kept()
    """Recurrent policies: the whole actor-critic state ``[K, L, N, H]`` before the step (stored ``[N, K, L, H]``
    per step, so trajectory segments start from it)."""
    amp_obs: torch.Tensor | None = _kept(minibatch=True)
    """AMP: the AMP observation of the state the step acted on (raw; ``rl_core/amp.py``)."""
    amp_next_obs: torch.Tensor | None = _kept(minibatch=True)
    """AMP: the AMP observation of the state the step reached, before a reset."""


FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Transition))
"""Every field, in declaration order."""
MINIBATCH_FIELDS: frozenset[str] = frozenset(f.name for f in dataclasses.fields(Transition) if f.metadata["minibatch"])
"""The fields a minibatch gathers (with the storage's ``advantages`` and ``returns``)."""
