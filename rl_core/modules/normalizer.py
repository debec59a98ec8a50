"""Running mean / variance normalizers (parallel-merge update, statistics in float64)."""

from __future__ import annotations

import torch
from torch import nn

from rl_core import distributed


class RunningNormalizer(nn.Module):
    """Normalizes ``x`` by running statistics; ``update`` merges a batch (Chan et al.); frozen unless updated.

    The statistics live in buffers, so they are saved in the state dict and exported with the policy.
    """

    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: int | tuple[int, ...], clip: float = 10.0, eps: float = 1e-8):
        super().__init__()
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.clip, self.eps = float(clip), float(eps)
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Merge the statistics of a batch ``x`` of shape ``[..., *shape]`` (under torchrun: of every rank's batch)."""
        x = x.reshape(-1, *self.mean.shape).to(torch.float64)
        if distributed.active():
            sums = torch.stack([torch.full_like(self.mean, x.shape[0]), x.sum(0), x.square().sum(0)])
            distributed.all_reduce_sum_(sums)
            n: torch.Tensor | int = sums[0].flatten()[0]
            batch_mean = sums[1] / n
            batch_var = (sums[2] / n - batch_mean.square()).clamp(min=0.0)
        else:
            n = x.shape[0]
            batch_mean = x.mean(0)
            # two passes (centred, as var's): torch's x.var(0) took 280 us on [1024, 48] on one core, this 40 us
            batch_var = (x - batch_mean).square().mean(0)
        total = self.count + n
        delta = batch_mean - self.mean
        self.mean += delta * (n / total)
        self.var.copy_((self.var * self.count + batch_var * n + delta.square() * self.count * n / total) / total)
        self.count.copy_(total)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = self.mean.to(x.dtype)
        std = torch.sqrt(self.var + self.eps).to(x.dtype)
        return ((x - mean) / std).clamp(-self.clip, self.clip)


class ReturnNormalizer(nn.Module):
    """Scales rewards by the running std of the per-env discounted return (not centred), for learning only."""

    returns: torch.Tensor

    def __init__(self, num_envs: int, gamma: float, device: torch.device | str):
        super().__init__()
        self.gamma = float(gamma)
        self.stats = RunningNormalizer((), clip=1e6)
        self.register_buffer("returns", torch.zeros(num_envs, dtype=torch.float64, device=device))
        self.to(device)

    @torch.no_grad()
    def __call__(self, rewards: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
        self.returns.mul_(self.gamma).add_(rewards)
        self.stats.update(self.returns)
        self.returns.masked_fill_(done, 0.0)
        return rewards / torch.sqrt(self.stats.var + 1e-8).to(rewards.dtype)
