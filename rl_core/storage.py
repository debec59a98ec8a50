"""RolloutStorage: ``[T, N, ...]`` tensors on the policy device, one per recorded ``Transition`` field, filled step
by step (allocated once, at the first step ever recorded).

Observations keep the env's shape and element type: pixel observations stay uint8 (the CNN scales them).
Recurrent policies also store, per step, the recurrent state the policy had BEFORE the step, and learn from
minibatches of whole trajectory segments (``recurrent_minibatches``). Distillation also stores the teacher's
action of every step (``teacher_actions``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from rl_core.gae import compute_gae
from rl_core.transition import FIELDS, MINIBATCH_FIELDS, Transition


class RolloutStorage:
    """One rollout of ``T`` steps from ``N`` envs, then shuffled minibatches over the flattened batch.

    The buffers are the fields of ``Transition`` (``rl_core/transition.py``) that the rollout's first transition
    carried, ``[T, N, ...]`` in the element type it gave; ``storage.<field>`` reads a buffer (None for a field this
    algorithm does not record)."""

    def __init__(self, T: int, N: int, device: torch.device):
        self.T, self.N, self.device = T, N, device
        self.buffers: dict[str, torch.Tensor] = {}
        """Field name -> ``[T, N, ...]`` buffer (``hidden``: ``[T, N, K, L, H]``)."""
        self.advantages = torch.zeros(T, N, device=device)
        self.returns = torch.zeros(T, N, device=device)
        self.has_returns = False
        """``compute_returns`` ran: the minibatches carry ``advantages`` and ``returns``."""
        self.step = 0

    def __getattr__(self, name: str) -> Any:  # a Tensor, or None for a field this rollout does not keep
        if name in FIELDS:
            return self.__dict__["buffers"].get(name)
        raise AttributeError(f"RolloutStorage has no attribute {name!r}")

    def add(self, transition: Transition) -> None:
        """Write step ``step``; the first transition ever added declares the buffers (allocated outside inference
        mode, so the update can learn from them), every later one must carry the same fields."""
        t = self.step
        if t >= self.T:
            raise RuntimeError("RolloutStorage is full; call clear() after the update")
        first = not self.buffers
        for name in FIELDS:
            value = getattr(transition, name)
            if value is not None and name == "hidden":
                value = value.permute(2, 0, 1, 3)
            buffer = self.buffers.get(name)
            if (value is None) != (buffer is None) and not (first and value is not None):
                raise ValueError(f"this rollout storage {'keeps' if buffer is not None else 'does not keep'} "
                                 f"'{name}': every transition must carry the fields of the first one")
            if value is None:
                continue
            if buffer is None:
                with torch.inference_mode(False):
                    buffer = self.buffers[name] = torch.zeros(self.T, *value.shape, dtype=value.dtype,
                                                              device=self.device)
            buffer[t].copy_(value)
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
        self.has_returns = True

    def flat(self) -> dict[str, torch.Tensor]:
        """Views of the minibatch fields (and the advantages and returns, once computed) with time and envs
        flattened into one sample axis ``[T * N, ...]``."""
        B = self.T * self.N
        flat = {k: v.reshape(B, *v.shape[2:]) for k, v in self.buffers.items() if k in MINIBATCH_FIELDS}
        if self.has_returns:
            flat["advantages"], flat["returns"] = self.advantages.reshape(B), self.returns.reshape(B)
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

    def recurrent_minibatches(self, num_mini_batches: int, num_epochs: int, generator: torch.Generator | None
                              ) -> Iterator[dict[str, torch.Tensor]]:
        """rsl_rl's scheme: per epoch, the envs in a fresh random order split into ``num_mini_batches`` groups;
        a minibatch is every trajectory segment of one group, padded ``[T, M, ...]``, with ``hidden [K, L, M, H]``
        the stored state at each segment's start. Padded steps get weight 0 (so every loss mean ignores them);
        the other per-sample entries are flattened time-major to ``[T * M]`` like the memoryless batches."""
        assert self.hidden is not None
        layout = self.trajectory_layout()
        flat = self.flat()
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
