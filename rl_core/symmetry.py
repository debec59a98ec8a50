"""Symmetry augmentation (``algorithm.symmetry=augment``, rsl_rl's scheme): each minibatch doubled with its mirror.

The rollout stores NORMALIZED observations, while an env mirrors raw ones. A signed permutation commutes with the
normalizer only if the running statistics are themselves mirror-symmetric, which they are not in general; so the
mirrored rows are computed as ``normalize(mirror(denormalize(obs_n)))`` with the current normalizer of their group:
the policy's for the policy observations, the critic's own for a separate critic group (an asymmetric
actor-critic: the env mirrors that group too, ``rl_core.env_api.Symmetric``). Caveat: values the normalizer clipped
(beyond ``policy.obs_clip`` standard deviations) are not recovered by ``denormalize``, so such rows are mirrored
from the clipped value.

The mirrored rows' old values, returns and advantages are COPIED from their originals, as rsl_rl does (its PPO
repeats ``values``, ``returns`` and ``advantages`` for each augmentation and evaluates the critic on the augmented
observations of every group): the value of the mirrored state is that of the state, so the critic learns the same
target on the mirrored critic observation; recomputing them would need the critic's values of mirrored rollouts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from rl_core.env_api import Symmetric, VecEnv
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
    critic: TensorFn | None = None
    """Mirror of raw critic observations (None: the env has no separate critic group)."""


def mirrors_of(env: VecEnv) -> Mirrors | None:
    """The env's mirror functions of every group it offers (None: the env offers no mirror)."""
    if not isinstance(env, Symmetric):
        return None
    mirror = env.mirror_obs

    def policy(obs: torch.Tensor) -> torch.Tensor:
        return mirror(obs, "policy")

    def critic(obs: torch.Tensor) -> torch.Tensor:
        return mirror(obs, "critic")

    return Mirrors(policy, env.mirror_actions, critic if "critic" in env.obs_dims else None)


def on_normalized(mirror: TensorFn, normalizer: nn.Module) -> TensorFn:
    """``mirror`` applied to normalized observations: denormalize, mirror, normalize again (same statistics)."""
    if not isinstance(normalizer, RunningNormalizer):
        return mirror

    def mirrored(obs_n: torch.Tensor) -> torch.Tensor:
        mean = normalizer.mean.to(obs_n.dtype)
        std = torch.sqrt(normalizer.var + normalizer.eps).to(obs_n.dtype)
        return normalizer(mirror(obs_n * std + mean))

    return mirrored


def augment(batch: dict[str, torch.Tensor], mirror_obs: TensorFn, mirror_actions: TensorFn,
            mirror_critic_obs: TensorFn | None = None) -> dict[str, torch.Tensor]:
    """The batch followed by its mirror (twice the rows). Pure.

    Mirrored rows: ``mirror_obs(obs)`` (the function gets the batch's observations as stored), ``mirror_actions``
    of the actions, ``mirror_critic_obs(critic_obs)`` with a separate critic group (None: the critic reads the
    policy observations), each taken from ``batch["mirror_obs"]`` / ``["mirror_actions"]`` /
    ``["mirror_critic_obs"]`` when the caller mirrored them already; and the originals' old log-probs, distribution
    parameters, values, advantages, returns and weights (copied, as rsl_rl: module docstring). ``kl_weights``
    (original rows 1 x weight, mirrored rows 0) keeps the KL of the adaptive learning rate on the original rows:
    the stored distribution parameters are those of the unmirrored observation."""
    mirrored_obs = batch["mirror_obs"] if "mirror_obs" in batch else mirror_obs(batch["obs"])
    mirrored_actions = batch["mirror_actions"] if "mirror_actions" in batch else mirror_actions(batch["actions"])
    obs = torch.cat([batch["obs"], mirrored_obs])
    out = {k: torch.cat([batch[k], batch[k]]) for k in SAME_KEYS}
    out["obs"] = obs
    out["critic_obs"] = obs
    if mirror_critic_obs is not None:
        critic = batch["critic_obs"]
        mirrored_critic = batch["mirror_critic_obs"] if "mirror_critic_obs" in batch else mirror_critic_obs(critic)
        out["critic_obs"] = torch.cat([critic, mirrored_critic])
    out["actions"] = torch.cat([batch["actions"], mirrored_actions])
    out["kl_weights"] = torch.cat([batch["weights"], torch.zeros_like(batch["weights"])])
    return out
