"""Actor and critic networks, their observation normalizers (or CNN encoders), and the action distribution head."""

from __future__ import annotations

import math

import torch
from torch import nn

from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec, VecEnv, as_shape, obs_shape
from rl_core.errors import ConfigError
from rl_core.modules.cnn import NatureCNN
from rl_core.modules.distributions import CategoricalHead, GaussianHead, SquashedGaussianHead
from rl_core.modules.mlp import mlp
from rl_core.modules.normalizer import RunningNormalizer


class ActorCritic(nn.Module):
    """Actor: normalized policy obs -> distribution params. Critic: normalized critic obs -> value.

    With ``cfg.encoder == "cnn"`` the observations are uint8 images; ``encoder`` (and ``critic_encoder``, None when
    the critic shares the actor's) turns them into features first. ``actor`` / ``critic`` are the MLPs.
    """

    def __init__(self, obs_shape: int | tuple[int, ...], critic_obs_shape: int | tuple[int, ...] | None,
                 action_spec: ActionSpec, cfg: PolicyConfig):
        """``critic_obs_shape`` None: the critic sees the policy observations (and shares their normalizer)."""
        super().__init__()
        self.obs_shape = as_shape(obs_shape)
        self.obs_dim, self.action_spec = math.prod(self.obs_shape), action_spec
        self.asymmetric = critic_obs_shape is not None
        self.critic_obs_shape = as_shape(critic_obs_shape) if critic_obs_shape is not None else self.obs_shape
        self.critic_obs_dim = math.prod(self.critic_obs_shape)
        self.obs_dtype = torch.uint8 if cfg.encoder == "cnn" else torch.float32
        """Element type of the raw observations: uint8 images for the CNN, float32 vectors otherwise."""
        self.encoder: nn.Module = nn.Identity()
        self.critic_encoder: nn.Module | None = nn.Identity()
        actor_in, critic_in = self.obs_dim, self.critic_obs_dim
        if cfg.encoder == "cnn":
            for what, shape in (("policy", self.obs_shape), ("critic", self.critic_obs_shape)):
                if len(shape) != 3:
                    raise ConfigError("policy.encoder", "cnn", f"mlp: the task's {what} observations are vectors "
                                      f"{list(shape)}, the CNN needs images [C, H, W]")
            self.encoder = NatureCNN(self.obs_shape, cfg.cnn_feature_dim, cfg.orthogonal_init)
            self.critic_encoder = (None if cfg.share_encoder and not self.asymmetric
                                   else NatureCNN(self.critic_obs_shape, cfg.cnn_feature_dim, cfg.orthogonal_init))
            actor_in = critic_in = cfg.cnn_feature_dim
        elif len(self.obs_shape) != 1 or len(self.critic_obs_shape) != 1:
            raise ConfigError("policy.encoder", "mlp", f"cnn: the task's observations are images {list(self.obs_shape)}")
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
        self.actor = mlp(actor_in, cfg.actor_hidden_dims, action_spec.n, cfg.activation, cfg.orthogonal_init, 0.01)
        self.critic = mlp(critic_in, cfg.critic_hidden_dims, 1, cfg.activation, cfg.orthogonal_init, 1.0)
        self.obs_normalizer: nn.Module = RunningNormalizer(self.obs_dim, cfg.obs_clip) if cfg.normalize_obs else nn.Identity()
        self.critic_obs_normalizer: nn.Module = (
            RunningNormalizer(self.critic_obs_dim, cfg.obs_clip) if cfg.normalize_obs and self.asymmetric
            else self.obs_normalizer
        )

    @classmethod
    def for_env(cls, env: VecEnv, cfg: PolicyConfig) -> ActorCritic:
        """The actor-critic for ``env``'s observation groups and action space."""
        return cls(obs_shape(env, "policy") or (), obs_shape(env, "critic"), env.action_spec, cfg)

    def critic_parameters(self) -> list[nn.Parameter]:
        """The critic's own parameters (its MLP, and its encoder unless shared with the actor)."""
        params = list(self.critic.parameters())
        if self.critic_encoder is not None:
            params += list(self.critic_encoder.parameters())
        return params

    # -- normalization (statistics change only through update_normalizers, during collection)
    def update_normalizers(self, obs: torch.Tensor, critic_obs: torch.Tensor | None) -> None:
        if isinstance(self.obs_normalizer, RunningNormalizer):
            self.obs_normalizer.update(obs)
            if self.asymmetric:
                self.critic_obs_normalizer.update(critic_obs)  # type: ignore[operator]

    # -- on normalized observations (rollout and update)
    def dist_params(self, obs_n: torch.Tensor) -> torch.Tensor:
        return self.head.params(self.actor(self.encoder(obs_n)))

    def value(self, critic_obs_n: torch.Tensor) -> torch.Tensor:
        encoder = self.critic_encoder if self.critic_encoder is not None else self.encoder
        return self.critic(encoder(critic_obs_n)).squeeze(-1)

    def params_and_value(self, obs_n: torch.Tensor, critic_obs_n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``dist_params`` and ``value`` together; a shared encoder runs once."""
        if self.critic_encoder is None:
            features = self.encoder(obs_n)
            return self.head.params(self.actor(features)), self.critic(features).squeeze(-1)
        return self.dist_params(obs_n), self.value(critic_obs_n)

    # -- on raw observations (evaluation and export): frozen normalizer + deterministic action
    def act_inference(self, obs: torch.Tensor) -> torch.Tensor:
        params = self.dist_params(self.obs_normalizer(obs))
        return self.head.mode(params)
