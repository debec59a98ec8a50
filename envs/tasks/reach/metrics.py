"""What a reaching step reports to the iteration log (means over the worlds that did not diverge)."""

from __future__ import annotations

import torch


def log(terms: torch.Tensor, names: list[str], valid: torch.Tensor, distance: torch.Tensor, terminated: torch.Tensor,
        truncated: torch.Tensor, diverged: torch.Tensor) -> dict[str, torch.Tensor]:
    """``Env/<name>`` of one step: each reward term's mean (``terms [T, N]``, weighted), the mean distance and the
    done shares over the valid worlds, the diverged share (one reduction for all, no host sync)."""
    n = valid.float().sum().clamp(min=1.0)
    stacked = torch.cat([terms, torch.stack([distance, terminated.float(), truncated.float()])])
    means = torch.where(valid, stacked, 0.0).sum(1) / n
    out = dict(zip([f"rew_{name}" for name in names] + ["distance", "terminated", "truncated"], means.unbind(),
                   strict=True))
    out["diverged"] = diverged.float().mean()
    return out
