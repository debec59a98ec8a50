"""What a step of any task family reports to the iteration log (``Env/<name>``)."""

from __future__ import annotations

import torch


def step_log(terms: torch.Tensor, names: list[str], valid: torch.Tensor, measures: dict[str, torch.Tensor],
             terminated: torch.Tensor, truncated: torch.Tensor, is_diverged: torch.Tensor) -> dict[str, torch.Tensor]:
    """``Env/<name>`` of one step: each reward term's mean (``terms [T, N]``, weighted), the family's ``measures``
    and the done shares, over the worlds that did not diverge (a diverged world's values can be huge or NaN); the
    diverged share. One reduction for all, no host sync."""
    n = valid.float().sum().clamp(min=1.0)
    rows = [*measures.values(), terminated.float(), truncated.float()]
    stacked = torch.cat([terms, torch.stack(rows)])
    means = torch.where(valid, stacked, torch.zeros_like(stacked)).sum(1) / n
    keys = [f"rew_{name}" for name in names] + [*measures, "terminated", "truncated"]
    out = dict(zip(keys, means.unbind(), strict=True))
    out["diverged"] = is_diverged.float().mean()
    return out
