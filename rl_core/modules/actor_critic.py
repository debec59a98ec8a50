"""Actor and critic networks, their observation normalizers (or CNN encoders), and the action distribution head."""

from __future__ import annotations

import math

import torch
from torch import nn

from contract.errors import ConfigError
from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec, VecEnv, as_shape, obs_shape
from rl_core.modules.cnn import NatureCNN
from rl_core.modules.distributions import CategoricalHead, GaussianHead, make_head
from rl_core.modules.memory import Memory
from rl_core.modules.mlp import mlp
from rl_core.modules.normalizer import RunningNormalizer


class ActorCritic(nn.Module):
    """Actor: normalized policy obs -> distribution params. Critic: normalized critic obs -> value.

    With ``cfg.encoder == "cnn"`` the observations are uint8 images; ``encoder`` (and ``critic_encoder``, None when
    the critic shares the actor's) turns them into features first. ``actor`` / ``critic`` are the MLPs.

    With ``cfg.memory`` lstm / gru, ``actor_memory`` and ``critic_memory`` (separate) sit between the (normalized)
    observations and the MLPs. The recurrent state of the whole actor-critic is one tensor ``[K, L, N, H]``: the
    actor memory's ``S`` state tensors first, then the critic's (``K = 2 S``; see ``rl_core.modules.memory``).
    The forward passes that carry that state (rollout steps, values in a state, padded sequences) are the
    functions of ``rl_core.modules.recurrent_steps``; the methods here are the memoryless ones and inference.
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
        # The order in which the parts are built fixes the initial weights (one RNG stream) and the parameter order.
        self.encoder: nn.Module = nn.Identity()
        self.critic_encoder: nn.Module | None = nn.Identity()
        actor_in, critic_in = self._build_encoders(cfg)
        self.head: GaussianHead | CategoricalHead = make_head(action_spec, cfg)
        self.actor_memory: Memory | None = None
        self.critic_memory: Memory | None = None
        if cfg.recurrent:
            self.actor_memory = Memory(cfg.memory, actor_in, cfg.memory_size, cfg.memory_layers, cfg.orthogonal_init)
            self.critic_memory = Memory(cfg.memory, critic_in, cfg.memory_size, cfg.memory_layers, cfg.orthogonal_init)
            actor_in = critic_in = cfg.memory_size
        self.actor = mlp(actor_in, cfg.actor_hidden_dims, action_spec.n, cfg.activation, cfg.orthogonal_init, 0.01)
        self.critic = mlp(critic_in, cfg.critic_hidden_dims, 1, cfg.activation, cfg.orthogonal_init, 1.0)
        self.obs_normalizer: nn.Module = (RunningNormalizer(self.obs_dim, cfg.obs_clip) if cfg.normalize_obs
                                          else nn.Identity())
        self.critic_obs_normalizer: nn.Module = (
            RunningNormalizer(self.critic_obs_dim, cfg.obs_clip) if cfg.normalize_obs and self.asymmetric
            else self.obs_normalizer
        )

    def _build_encoders(self, cfg: PolicyConfig) -> tuple[int, int]:
        """Set the CNN encoders when ``cfg.encoder == "cnn"`` (the critic's is None when it shares the actor's);
        returns the feature widths the actor and the critic read."""
        if cfg.encoder != "cnn":
            if len(self.obs_shape) != 1 or len(self.critic_obs_shape) != 1:
                raise ConfigError("policy.encoder", "mlp",
                                  f"cnn: the task's observations are images {list(self.obs_shape)}")
            return self.obs_dim, self.critic_obs_dim
        for what, shape in (("policy", self.obs_shape), ("critic", self.critic_obs_shape)):
            if len(shape) != 3:
                raise ConfigError("policy.encoder", "cnn", f"mlp: the task's {what} observations are vectors "
                                  f"{list(shape)}, the CNN needs images [C, H, W]")
        self.encoder = NatureCNN(self.obs_shape, cfg.cnn_feature_dim, cfg.orthogonal_init)
        self.critic_encoder = (None if cfg.share_encoder and not self.asymmetric
                               else NatureCNN(self.critic_obs_shape, cfg.cnn_feature_dim, cfg.orthogonal_init))
        return cfg.cnn_feature_dim, cfg.cnn_feature_dim

    @classmethod
    def for_env(cls, env: VecEnv, cfg: PolicyConfig) -> ActorCritic:
        """The actor-critic for ``env``'s observation groups and action space."""
        return cls(obs_shape(env, "policy") or (), obs_shape(env, "critic"), env.action_spec, cfg)

    def critic_parameters(self) -> list[nn.Parameter]:
        """The critic's own parameters (its MLP, and its encoder unless shared with the actor)."""
        params = list(self.critic.parameters())
        if self.critic_memory is not None:
            params += list(self.critic_memory.parameters())
        if self.critic_encoder is not None:
            params += list(self.critic_encoder.parameters())
        return params

    # -- normalization (statistics change only through update_normalizers, during collection)
    def update_normalizers(self, obs: torch.Tensor, critic_obs: torch.Tensor | None) -> None:
        """Merge a batch into the running statistics; ``critic_obs`` None leaves a separate critic normalizer
        as it is (distillation trains no critic)."""
        if isinstance(self.obs_normalizer, RunningNormalizer):
            self.obs_normalizer.update(obs)
            if self.asymmetric and critic_obs is not None:
                self.critic_obs_normalizer.update(critic_obs)  # type: ignore[operator]

    # -- on normalized observations (rollout and update); with memory: rl_core.modules.recurrent_steps
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

    @property
    def is_recurrent(self) -> bool:
        return self.actor_memory is not None

    # -- on raw observations (evaluation and export): frozen normalizer + deterministic action
    def act_inference(self, obs: torch.Tensor) -> torch.Tensor:
        """Deterministic action of a memoryless policy (recurrent ones: ``act_inference_step``)."""
        if self.is_recurrent:
            raise TypeError("act_inference on a recurrent policy: use act_inference_step(obs, actor_state)")
        params = self.dist_params(self.obs_normalizer(obs))
        return self.head.mode(params)

    def init_actor_hidden(self, n: int, device: torch.device | str = "cpu") -> torch.Tensor:
        """The zero state ``[S, L, n, H]`` of the actor's memory (evaluation / deployment carry only this)."""
        assert self.actor_memory is not None
        return torch.zeros(self.actor_memory.state_shape(n), device=device)

    def act_inference_step(self, obs: torch.Tensor, actor_hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Recurrent deterministic action: ``(action, next actor state)`` from raw ``obs`` and the actor state."""
        assert self.actor_memory is not None
        y, nxt = self.actor_memory(self.encoder(self.obs_normalizer(obs)), actor_hidden)
        return self.head.mode(self.head.params(self.actor(y))), nxt
