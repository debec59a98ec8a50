"""The forward passes of an ``ActorCritic`` that carry its whole recurrent state.

The whole state of ``n`` envs is one tensor ``[K, L, n, H]``: the actor memory's ``S`` state tensors first, then
the critic's (``K = 2 S``; ``rl_core.modules.memory``). The runner steps it through the rollout, PPO and
distillation replay padded trajectory segments from their stored initial states. Without memory every function
here falls back to the memoryless methods of ``ActorCritic`` (the state is ``None``).
"""

from __future__ import annotations

import torch
from torch import nn

from rl_core.modules.actor_critic import ActorCritic


def hidden_shape(policy: ActorCritic, n: int) -> tuple[int, ...]:
    """Shape of the whole actor-critic state for ``n`` envs, ``[K, L, n, H]`` (``()`` without memory)."""
    if policy.actor_memory is None:
        return ()
    S, L, _, H = policy.actor_memory.state_shape(n)
    return (2 * S, L, n, H)


def init_hidden(policy: ActorCritic, n: int, device: torch.device | str = "cpu") -> torch.Tensor | None:
    """The zero state of ``n`` envs (None without memory)."""
    return torch.zeros(hidden_shape(policy, n), device=device) if policy.is_recurrent else None


def _split(hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The actor's and the critic's parts ``[S, L, N, H]`` of a whole state."""
    S = hidden.shape[0] // 2
    return hidden[:S], hidden[S:]


def _critic_encoder(policy: ActorCritic) -> nn.Module:
    return policy.critic_encoder if policy.critic_encoder is not None else policy.encoder


def rollout_step(policy: ActorCritic, obs_n: torch.Tensor, critic_obs_n: torch.Tensor, hidden: torch.Tensor | None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """One rollout step on normalized observations: ``(dist params, values, next state)``; the next state is
    None without memory (then this is ``policy.params_and_value``)."""
    if policy.actor_memory is None or policy.critic_memory is None or hidden is None:
        params, values = policy.params_and_value(obs_n, critic_obs_n)
        return params, values, None
    ha, hc = _split(hidden)
    ya, ha = policy.actor_memory(policy.encoder(obs_n), ha)
    yc, hc = policy.critic_memory(_critic_encoder(policy)(critic_obs_n), hc)
    return policy.head.params(policy.actor(ya)), policy.critic(yc).squeeze(-1), torch.cat([ha, hc])


def actor_step(policy: ActorCritic, obs_n: torch.Tensor, hidden: torch.Tensor | None
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``rollout_step`` without the critic: ``(dist params, next state)``. The critic's part of the whole
    state is passed through unchanged (distillation carries the same state layout as PPO)."""
    if policy.actor_memory is None or hidden is None:
        return policy.dist_params(obs_n), None
    ha, hc = _split(hidden)
    ya, ha = policy.actor_memory(policy.encoder(obs_n), ha)
    return policy.head.params(policy.actor(ya)), torch.cat([ha, hc])


def value_with_state(policy: ActorCritic, critic_obs_n: torch.Tensor, hidden: torch.Tensor | None) -> torch.Tensor:
    """V(obs) in the given whole state (``policy.value`` without memory); the state is not advanced."""
    if policy.critic_memory is None or hidden is None:
        return policy.value(critic_obs_n)
    y, _ = policy.critic_memory(_critic_encoder(policy)(critic_obs_n), _split(hidden)[1])
    return policy.critic(y).squeeze(-1)


def sequence_params(policy: ActorCritic, obs_n: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """``sequence_params_and_value`` without the critic: dist params ``[T * M, P]`` of padded trajectories
    ``[T, M, ...]`` from their initial whole states ``[K, L, M, H]``."""
    assert policy.actor_memory is not None
    T, M = obs_n.shape[:2]
    ya, _ = policy.actor_memory(policy.encoder(obs_n), _split(hidden)[0])
    return policy.head.params(policy.actor(ya.reshape(T * M, -1)))


def sequence_params_and_value(policy: ActorCritic, obs_n: torch.Tensor, critic_obs_n: torch.Tensor,
                              hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded trajectories ``[T, M, ...]`` from their initial states ``[K, L, M, H]``: dist params
    ``[T * M, P]`` and values ``[T * M]`` (time-major flattening). Padding sits after each trajectory's end,
    so it never influences a real step."""
    assert policy.actor_memory is not None and policy.critic_memory is not None
    T, M = obs_n.shape[:2]
    ha, hc = _split(hidden)
    ya, _ = policy.actor_memory(policy.encoder(obs_n), ha)
    yc, _ = policy.critic_memory(_critic_encoder(policy)(critic_obs_n), hc)
    params = policy.head.params(policy.actor(ya.reshape(T * M, -1)))
    return params, policy.critic(yc.reshape(T * M, -1)).squeeze(-1)
