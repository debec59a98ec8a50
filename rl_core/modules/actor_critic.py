"""Separate actor and critic MLPs, their observation normalizers, and the action distribution head."""

from __future__ import annotations

import torch
from torch import nn

from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec
from rl_core.errors import ConfigError
from rl_core.modules.distributions import CategoricalHead, GaussianHead, SquashedGaussianHead
from rl_core.modules.mlp import mlp
from rl_core.modules.normalizer import RunningNormalizer


class ActorCritic(nn.Module):
    """Actor: normalized policy obs -> distribution params. Critic: normalized critic obs -> value."""

    def __init__(self, obs_dim: int, critic_obs_dim: int | None, action_spec: ActionSpec, cfg: PolicyConfig):
        """``critic_obs_dim`` None: the critic sees the policy observations (and shares their normalizer)."""
        super().__init__()
        self.obs_dim, self.action_spec = obs_dim, action_spec
        self.asymmetric = critic_obs_dim is not None
        self.critic_obs_dim = critic_obs_dim if critic_obs_dim is not None else obs_dim
        self.head: GaussianHead | CategoricalHead
        if action_spec.discrete:
            if cfg.distribution != "gaussian":
                raise ConfigError("policy.distribution", cfg.distribution, "'gaussian' for a task with discrete actions "
                                  "(a categorical head is used)")
            self.head = CategoricalHead(action_spec.n)
        elif cfg.distribution == "squashed_gaussian":
            n = action_spec.n
            self.head = SquashedGaussianHead(n, cfg.init_noise_std, cfg.min_std, cfg.max_std,
                                             action_spec.low or (-1.0,) * n, action_spec.high or (1.0,) * n)
        else:
            self.head = GaussianHead(action_spec.n, cfg.init_noise_std, cfg.min_std, cfg.max_std)
        self.actor = mlp(obs_dim, cfg.actor_hidden_dims, action_spec.n, cfg.activation, cfg.orthogonal_init, 0.01)
        self.critic = mlp(self.critic_obs_dim, cfg.critic_hidden_dims, 1, cfg.activation, cfg.orthogonal_init, 1.0)
        self.obs_normalizer: nn.Module = RunningNormalizer(obs_dim, cfg.obs_clip) if cfg.normalize_obs else nn.Identity()
        self.critic_obs_normalizer: nn.Module = (
            RunningNormalizer(critic_obs_dim, cfg.obs_clip) if cfg.normalize_obs and self.asymmetric else self.obs_normalizer
        )

    # -- normalization (statistics change only through update_normalizers, during collection)
    def update_normalizers(self, obs: torch.Tensor, critic_obs: torch.Tensor | None) -> None:
        if isinstance(self.obs_normalizer, RunningNormalizer):
            self.obs_normalizer.update(obs)
            if self.asymmetric:
                self.critic_obs_normalizer.update(critic_obs)  # type: ignore[operator]

    # -- on normalized observations (rollout and update)
    def dist_params(self, obs_n: torch.Tensor) -> torch.Tensor:
        return self.head.params(self.actor(obs_n))

    def value(self, critic_obs_n: torch.Tensor) -> torch.Tensor:
        return self.critic(critic_obs_n).squeeze(-1)

    # -- on raw observations (evaluation and export): frozen normalizer + deterministic action
    def act_inference(self, obs: torch.Tensor) -> torch.Tensor:
        params = self.dist_params(self.obs_normalizer(obs))
        return self.head.mode(params)
