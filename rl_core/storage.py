"""RolloutStorage: preallocated ``[T, N, ...]`` tensors on the policy device, filled step by step.

Observations keep the env's shape and element type: pixel observations stay uint8 (the CNN scales them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from rl_core.env_api import as_shape
from rl_core.gae import compute_gae


class RolloutStorage:
    """One rollout of ``T`` steps from ``N`` envs, then shuffled minibatches over the flattened batch."""

    def __init__(self, T: int, N: int, obs_shape: int | tuple[int, ...], critic_obs_shape: int | tuple[int, ...] | None,
                 action_dim: int, param_dim: int, device: torch.device, obs_dtype: torch.dtype = torch.float32):
        self.T, self.N, self.device = T, N, device
        f: dict[str, Any] = dict(device=device, dtype=torch.float32)
        o: dict[str, Any] = dict(device=device, dtype=obs_dtype)
        self.obs = torch.zeros(T, N, *as_shape(obs_shape), **o)
        # None: the critic sees the policy observations (no second copy).
        self.critic_obs = torch.zeros(T, N, *as_shape(critic_obs_shape), **o) if critic_obs_shape is not None else None
        self.actions = torch.zeros(T, N, action_dim, **f)
        self.log_probs = torch.zeros(T, N, **f)
        self.dist_params = torch.zeros(T, N, param_dim, **f)
        self.values = torch.zeros(T, N, **f)
        self.rewards = torch.zeros(T, N, **f)
        self.terminated = torch.zeros(T, N, device=device, dtype=torch.bool)
        self.truncated = torch.zeros(T, N, device=device, dtype=torch.bool)
        self.final_values = torch.zeros(T, N, **f)
        self.weights = torch.ones(T, N, **f)
        """1: learn from the transition; 0: not (the env marked it invalid, e.g. diverged physics)."""
        self.advantages = torch.zeros(T, N, **f)
        self.returns = torch.zeros(T, N, **f)
        self.step = 0

    def add(self, obs: torch.Tensor, critic_obs: torch.Tensor | None, actions: torch.Tensor, log_probs: torch.Tensor,
            dist_params: torch.Tensor, values: torch.Tensor, rewards: torch.Tensor, terminated: torch.Tensor,
            truncated: torch.Tensor, final_values: torch.Tensor | None, invalid: torch.Tensor | None = None) -> None:
        t = self.step
        if t >= self.T:
            raise RuntimeError("RolloutStorage is full; call clear() after the update")
        self.obs[t].copy_(obs)
        if self.critic_obs is not None and critic_obs is not None:
            self.critic_obs[t].copy_(critic_obs)
        self.actions[t].copy_(actions)
        self.log_probs[t].copy_(log_probs)
        self.dist_params[t].copy_(dist_params)
        self.values[t].copy_(values)
        self.rewards[t].copy_(rewards)
        self.terminated[t].copy_(terminated)
        self.truncated[t].copy_(truncated)
        if invalid is None:
            self.weights[t].fill_(1.0)
        else:
            torch.logical_not(invalid, out=self.weights[t])
        if final_values is None:
            self.final_values[t].zero_()
        else:
            self.final_values[t].copy_(final_values)
        self.step = t + 1

    def clear(self) -> None:
        self.step = 0

    def compute_returns(self, last_values: torch.Tensor, gamma: float, lam: float) -> None:
        self.advantages, self.returns = compute_gae(self.rewards, self.values, self.terminated, self.truncated,
                                                    self.final_values, last_values, gamma, lam)

    def flat(self) -> dict[str, torch.Tensor]:
        """Views of the rollout with time and envs flattened into one sample axis ``[T * N, ...]``."""
        B = self.T * self.N
        flat = {
            "obs": self.obs.reshape(B, *self.obs.shape[2:]),
            "actions": self.actions.reshape(B, -1),
            "log_probs": self.log_probs.reshape(B),
            "dist_params": self.dist_params.reshape(B, -1),
            "values": self.values.reshape(B),
            "advantages": self.advantages.reshape(B),
            "returns": self.returns.reshape(B),
            "weights": self.weights.reshape(B),
        }
        if self.critic_obs is not None:
            flat["critic_obs"] = self.critic_obs.reshape(B, *self.critic_obs.shape[2:])
        return flat

    def minibatch_indices(self, num_mini_batches: int, num_epochs: int, generator: torch.Generator | None
                          ) -> Iterator[torch.Tensor]:
        """Every sample exactly once per epoch, in a fresh random order each epoch: the indices of each minibatch."""
        B = self.T * self.N
        size = B // num_mini_batches
        for _ in range(num_epochs):
            perm = torch.randperm(B, generator=generator, device=generator.device if generator is not None else self.device)
            for i in range(num_mini_batches):
                yield perm[i * size:(i + 1) * size]

    def minibatches(self, num_mini_batches: int, num_epochs: int, generator: torch.Generator | None
                    ) -> Iterator[dict[str, torch.Tensor]]:
        """The minibatches of ``minibatch_indices`` gathered (flattened after GAE)."""
        flat = self.flat()
        for idx in self.minibatch_indices(num_mini_batches, num_epochs, generator):
            yield gather(flat, idx)


def gather(flat: dict[str, torch.Tensor], idx: torch.Tensor) -> dict[str, torch.Tensor]:
    """One minibatch; a symmetric critic reads the policy observations (no second gather).

    ``index_select`` rather than ``v[idx]``: on the CPU it copies rows about 3x faster than advanced indexing
    (0.43 vs 1.42 ms for 24576 rows of 48 floats on our 2-core machine).
    """
    batch = {k: torch.index_select(v, 0, idx) for k, v in flat.items()}
    batch.setdefault("critic_obs", batch["obs"])
    return batch
