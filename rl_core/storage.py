"""RolloutStorage: preallocated ``[T, N, ...]`` tensors on the policy device, filled step by step.

Observations keep the env's shape and element type: pixel observations stay uint8 (the CNN scales them).
Recurrent policies also store, per step, the recurrent state the policy had BEFORE the step, and learn from
minibatches of whole trajectory segments (``recurrent_minibatches``). Distillation also stores the teacher's
action of every step (``teacher_actions``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

import torch

from rl_core.env_api import as_shape
from rl_core.gae import compute_gae


class RolloutStorage:
    """One rollout of ``T`` steps from ``N`` envs, then shuffled minibatches over the flattened batch."""

    def __init__(self, T: int, N: int, obs_shape: int | tuple[int, ...], critic_obs_shape: int | tuple[int, ...] | None,
                 action_dim: int, param_dim: int, device: torch.device, obs_dtype: torch.dtype = torch.float32,
                 hidden_shape: tuple[int, ...] = (), teacher_action_dim: int = 0):
        """``hidden_shape``: the policy's recurrent state ``(K, L, N, H)``, or ``()`` for a memoryless policy.
        ``teacher_action_dim`` > 0 (distillation): also keep the teacher's action of every step."""
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
        self.hidden: torch.Tensor | None = None
        """Recurrent state before each step, ``[T, N, K, L, H]`` (None for memoryless policies)."""
        if hidden_shape:
            K, L, _, H = hidden_shape
            self.hidden = torch.zeros(T, N, K, L, H, **f)
        self.teacher_actions: torch.Tensor | None = (
            torch.zeros(T, N, teacher_action_dim, **f) if teacher_action_dim > 0 else None)
        """Distillation: the teacher's (deterministic) action at each step, ``[T, N, A]`` (None otherwise)."""
        self.step = 0

    def add(self, obs: torch.Tensor, critic_obs: torch.Tensor | None, actions: torch.Tensor, log_probs: torch.Tensor,
            dist_params: torch.Tensor, values: torch.Tensor, rewards: torch.Tensor, terminated: torch.Tensor,
            truncated: torch.Tensor, final_values: torch.Tensor | None, invalid: torch.Tensor | None = None,
            hidden: torch.Tensor | None = None, teacher_actions: torch.Tensor | None = None) -> None:
        """``hidden``: the recurrent state ``[K, L, N, H]`` the policy had before this step (recurrent only);
        ``teacher_actions``: the teacher's labels of this step (distillation only)."""
        t = self.step
        if t >= self.T:
            raise RuntimeError("RolloutStorage is full; call clear() after the update")
        if self.hidden is not None:
            if hidden is None:
                raise ValueError("this storage is recurrent: add() needs the hidden state before the step")
            self.hidden[t].copy_(hidden.permute(2, 0, 1, 3))
        if self.teacher_actions is not None:
            if teacher_actions is None:
                raise ValueError("this storage keeps teacher actions: add() needs them")
            self.teacher_actions[t].copy_(teacher_actions)
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
        """GAE (``rl_core.gae``); a transition whose advantage or value target is not finite (an overflow of
        finite inputs) gets weight 0 and zeros, so no non-finite value target is stored."""
        last_ok = torch.isfinite(last_values)
        self.weights[-1].mul_(last_ok)  # the last step cannot bootstrap from a non-finite value
        invalid = self.weights == 0
        adv, ret = compute_gae(self.rewards, self.values, self.terminated, self.truncated, self.final_values,
                               torch.where(last_ok, last_values, torch.zeros_like(last_values)), gamma, lam, invalid)
        finite = torch.isfinite(adv) & torch.isfinite(ret)
        self.weights.mul_(finite)
        zero = torch.zeros_like(adv)
        self.advantages, self.returns = torch.where(finite, adv, zero), torch.where(finite, ret, zero)

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
        if self.teacher_actions is not None:
            flat["teacher_actions"] = self.teacher_actions.reshape(B, -1)
        return flat

    def minibatch_indices(self, num_mini_batches: int, num_epochs: int, generator: torch.Generator | None
                          ) -> Iterator[torch.Tensor]:
        """Every sample exactly once per epoch, in a fresh random order each epoch: the indices of each minibatch."""
        B = self.T * self.N
        size = B // num_mini_batches
        for _ in range(num_epochs):
            device = generator.device if generator is not None else self.device
            perm = torch.randperm(B, generator=generator, device=device)
            for i in range(num_mini_batches):
                yield perm[i * size:(i + 1) * size]

    # ------------------------------------------------------------------ recurrent: trajectory segments
    def trajectory_layout(self) -> dict[str, torch.Tensor]:
        """Each env's ``T`` steps split after every episode end (terminated, truncated or invalid) into
        trajectory segments, padded at their end to length ``T``. Segments are numbered env by env.

        Returns ``index [T, J]`` (flat sample ``t * N + n`` of each padded step; 0 on padding), ``mask [T, J]``
        (True on real steps), ``env [J]`` (the env of each segment) and ``start [J]`` (flat sample of each
        segment's first step, whose stored state the segment starts from). One host sync (the count ``J``).
        """
        T, N, dev = self.T, self.N, self.device
        done = self.terminated | self.truncated | (self.weights == 0)
        start = torch.zeros_like(done)
        start[0] = True
        start[1:] = done[:-1]
        start_nt = start.T  # [N, T]: env-major, so the segments of one env are consecutive
        starts = start_nt.reshape(-1)
        traj = torch.cumsum(starts.long(), 0) - 1
        t_ar = torch.arange(T, device=dev).expand(N, T)
        t0 = torch.cummax(torch.where(start_nt, t_ar, torch.zeros_like(t_ar)), dim=1).values
        pos = (t_ar - t0).reshape(-1)
        sample = (t_ar * N + torch.arange(N, device=dev).unsqueeze(1)).reshape(-1)
        J = int(traj[-1]) + 1
        index = torch.zeros(T, J, dtype=torch.long, device=dev)
        mask = torch.zeros(T, J, dtype=torch.bool, device=dev)
        index[pos, traj] = sample
        mask[pos, traj] = True
        env = torch.arange(N, device=dev).repeat_interleave(T)[starts]
        return {"index": index, "mask": mask, "env": env, "start": sample[starts]}

    def recurrent_minibatches(self, num_mini_batches: int, num_epochs: int, generator: torch.Generator | None,
                              keys: Collection[str] | None = None) -> Iterator[dict[str, torch.Tensor]]:
        """rsl_rl's scheme: per epoch, the envs in a fresh random order split into ``num_mini_batches`` groups;
        a minibatch is every trajectory segment of one group, padded ``[T, M, ...]``, with ``hidden [K, L, M, H]``
        the stored state at each segment's start. Padded steps get weight 0 (so every loss mean ignores them);
        the other per-sample entries are flattened time-major to ``[T * M]`` like the memoryless batches.
        ``keys``: gather only these entries of ``flat()`` (None: all)."""
        assert self.hidden is not None
        layout = self.trajectory_layout()
        flat = self.flat()
        if keys is not None:
            flat = {k: v for k, v in flat.items() if k in keys}
        hidden_flat = self.hidden.reshape(self.T * self.N, *self.hidden.shape[2:])
        size = self.N // num_mini_batches
        for _ in range(num_epochs):
            perm = torch.randperm(self.N, generator=generator,
                                  device=generator.device if generator is not None else self.device)
            for i in range(num_mini_batches):
                chosen = torch.zeros(self.N, dtype=torch.bool, device=self.device)
                chosen[perm[i * size:(i + 1) * size].to(self.device)] = True
                sel = chosen[layout["env"]].nonzero().squeeze(1)
                idx, mask = layout["index"][:, sel], layout["mask"][:, sel]
                T, M = idx.shape
                batch = gather(flat, idx.reshape(-1))
                batch["weights"] = batch["weights"] * mask.reshape(-1)
                batch["obs"] = batch["obs"].reshape(T, M, *batch["obs"].shape[1:])
                batch["critic_obs"] = batch["critic_obs"].reshape(T, M, *batch["critic_obs"].shape[1:])
                batch["hidden"] = torch.index_select(hidden_flat, 0, layout["start"][sel]).permute(1, 2, 0, 3)
                yield batch


def gather(flat: dict[str, torch.Tensor], idx: torch.Tensor) -> dict[str, torch.Tensor]:
    """One minibatch; a symmetric critic reads the policy observations (no second gather).

    ``index_select`` rather than ``v[idx]``: on the CPU it copies rows about 3x faster than advanced indexing
    (0.43 vs 1.42 ms for 24576 rows of 48 floats on our 2-core machine).
    """
    batch = {k: torch.index_select(v, 0, idx) for k, v in flat.items()}
    batch.setdefault("critic_obs", batch["obs"])
    return batch
