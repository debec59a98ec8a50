"""Start frames drawn where the policy fails most (BeyondMimic's adaptive sampling), per clip.

Each clip's possible start frames (all but its last) are cut into bins of ``start.bin_s``. Failures are counted per
bin of the frame where the episode failed and smoothed over time (an exponential average, ``failure_smoothing`` per
step); a bin's weight is its smoothed failure count plus ``uniform_share`` spread over the clip's bins, and each bin
also takes a decaying share (``kernel``, ``kernel_decay``) of the bins after it, so starts just before a hard part
are drawn more. Everything is fixed-shape torch on the env's device, no host sync; the counts are checkpointed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from envs.tasks.track.config import StartConfig

Uniform = Callable[[tuple[int, ...], float, float], torch.Tensor]
"""``MujocoTask._uniform``: draws from the task's generator."""


class StartSampler:
    """Start frames for the envs of clips of ``lengths`` frames, env ``i`` on clip ``env_clip[i]``."""

    def __init__(self, cfg: StartConfig, lengths: list[int], dt: float, env_clip: torch.Tensor, uniform: Uniform):
        device = env_clip.device
        self.cfg, self.uniform, self.env_clip = cfg, uniform, env_clip
        self.bin_frames = max(1, round(cfg.bin_s / dt))
        counts = [max(1, math.ceil((n - 1) / self.bin_frames)) for n in lengths]
        width = max(counts)
        self.valid = torch.arange(width, device=device)[None, :] < torch.tensor(counts, device=device)[:, None]
        """``[C, bins]``: the bins each clip has."""
        self.bins = torch.tensor(counts, device=device)[env_clip]
        """``[N]`` each env's clip's number of bins."""
        self.last_start = torch.tensor(lengths, device=device)[env_clip] - 2
        """``[N]`` the last frame an episode may start at (one step before the clip's end)."""
        self.failures = torch.zeros(len(lengths), width, device=device)
        """``[C, bins]`` smoothed failure counts (checkpointed)."""
        self.current = torch.zeros_like(self.failures)
        """``[C, bins]`` this step's failures."""

    def bin_of(self, frame: torch.Tensor) -> torch.Tensor:
        return torch.minimum(frame.clamp(min=0) // self.bin_frames, self.bins - 1)

    def record(self, failed: torch.Tensor, frame: torch.Tensor) -> None:
        """Count the episodes that failed (``failed [N]``) at ``frame [N]``."""
        self.current.index_put_((self.env_clip, self.bin_of(frame)), failed.float(), accumulate=True)

    def advance(self) -> None:
        """One control step of the exponential average."""
        self.failures += self.cfg.failure_smoothing * (self.current - self.failures)
        self.current.zero_()

    def probabilities(self) -> torch.Tensor:
        """``[C, bins]`` each clip's start-bin probabilities."""
        c = self.cfg
        counts = self.valid.sum(1, keepdim=True).float()
        w = torch.where(self.valid, self.failures + c.uniform_share / counts, torch.zeros_like(self.failures))
        if c.kernel > 1:
            out, total = torch.zeros_like(w), 0.0
            for k in range(c.kernel):  # a bin takes a share of the bins after it (the last one repeated)
                shifted = torch.cat([w[:, k:], w[:, -1:].expand(-1, k)], dim=1) if k else w
                out += c.kernel_decay ** k * torch.where(self.valid, shifted, torch.zeros_like(w))
                total += c.kernel_decay ** k
            w = torch.where(self.valid, out / total, torch.zeros_like(w))
        return w / w.sum(1, keepdim=True)

    def sample(self, n: int) -> torch.Tensor:
        """A start frame for every env ``[N]`` (all drawn: the random stream does not depend on which reset)."""
        u, v = self.uniform((n,), 0.0, 1.0), self.uniform((n,), 0.0, 1.0)
        if not self.cfg.adaptive:
            return torch.minimum((u * (self.last_start + 1).float()).long(), self.last_start)
        cdf = torch.cumsum(self.probabilities(), dim=1)[self.env_clip]
        b = torch.minimum(torch.searchsorted(cdf, u.unsqueeze(1)).squeeze(1), self.bins - 1)
        return torch.minimum(((b.float() + v) * self.bin_frames).long(), self.last_start)

    def entropy(self) -> torch.Tensor:
        """The normalized entropy of the start distribution (1: uniform), averaged over the clips (logged)."""
        p = self.probabilities()
        h = -(p * torch.log(p.clamp(min=1e-12))).sum(1)
        return (h / torch.log(self.valid.sum(1).float().clamp(min=2.0))).mean()
