"""Symmetry augmentation (``algorithm.symmetry=augment``, rsl_rl's scheme): each minibatch doubled with its mirror.

The rollout stores NORMALIZED observations, while an env mirrors raw ones. A signed permutation commutes with the
normalizer only if the running statistics are themselves mirror-symmetric, which they are not in general; so the
mirrored rows are computed as ``normalize(mirror(denormalize(obs_n)))`` with the policy's current normalizer.
Caveat: values the normalizer clipped (beyond ``policy.obs_clip`` standard deviations) are not recovered by
``denormalize``, so such rows are mirrored from the clipped value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from rl_core.modules.normalizer import RunningNormalizer

TensorFn = Callable[[torch.Tensor], torch.Tensor]

SAME_KEYS = ("log_probs", "dist_params", "values", "advantages", "returns", "weights")
"""Per-sample entries that the mirrored rows copy from their originals."""


@dataclass(frozen=True)
class Mirrors:
    """An env's mirror functions (``rl_core.env_api.Symmetric``), on raw observations and on actions."""

    obs: TensorFn
    """Mirror of raw policy observations."""
    actions: TensorFn
    """Mirror of actions."""


def on_normalized(mirror: TensorFn, normalizer: nn.Module) -> TensorFn:
    """``mirror`` applied to normalized observations: denormalize, mirror, normalize again (same statistics)."""
    if not isinstance(normalizer, RunningNormalizer):
        return mirror

    def mirrored(obs_n: torch.Tensor) -> torch.Tensor:
        mean = normalizer.mean.to(obs_n.dtype)
        std = torch.sqrt(normalizer.var + normalizer.eps).to(obs_n.dtype)
        return normalizer(mirror(obs_n * std + mean))

    return mirrored


def augment(batch: dict[str, torch.Tensor], mirror_obs: TensorFn, mirror_actions: TensorFn) -> dict[str, torch.Tensor]:
    """The batch followed by its mirror (twice the rows). Pure.

    Mirrored rows: ``mirror_obs(obs)`` (the function gets the batch's observations as stored), ``mirror_actions``
    of the actions (``batch["mirror_obs"]`` / ``batch["mirror_actions"]`` when the caller mirrored them already),
    and the originals' old log-probs, distribution parameters, values, advantages, returns and weights.
    ``kl_weights`` (original rows 1 x weight, mirrored rows 0) keeps the KL of the adaptive learning rate on the
    original rows: the stored distribution parameters are those of the unmirrored observation. The critic reads the
    policy observations (a separate critic group has no mirror)."""
    mirrored_obs = batch["mirror_obs"] if "mirror_obs" in batch else mirror_obs(batch["obs"])
    mirrored_actions = batch["mirror_actions"] if "mirror_actions" in batch else mirror_actions(batch["actions"])
    obs = torch.cat([batch["obs"], mirrored_obs])
    out = {k: torch.cat([batch[k], batch[k]]) for k in SAME_KEYS}
    out["obs"] = obs
    out["critic_obs"] = obs
    out["actions"] = torch.cat([batch["actions"], mirrored_actions])
    out["kl_weights"] = torch.cat([batch["weights"], torch.zeros_like(batch["weights"])])
    return out
