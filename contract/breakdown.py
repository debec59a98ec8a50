"""Per-command-range breakdown of evaluation metrics (pure Python: shared by play.py and the torch-free sim2sim).

An env that reports ``info["breakdown"]`` (name -> ``[N]`` value per step, e.g. the commanded forward speed)
and ``breakdown_edges`` (name -> bin edges) gets every per-step metric averaged within each bin of each value.
The averages are over steps (not episodes): a bin holds every step whose command fell into it.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

BINS = 4
"""Equal-width bins per commanded quantity."""


def edges(low: float, high: float, bins: int = BINS) -> list[float]:
    """``bins + 1`` equal-width edges over [low, high]."""
    return [low + (high - low) * i / bins for i in range(bins + 1)]


def bin_of(value: float, bin_edges: Sequence[float]) -> int:
    """Index of the bin holding ``value``; values outside the edges go to the first / last bin."""
    return min(max(bisect.bisect_right(bin_edges, value) - 1, 0), len(bin_edges) - 2)


def rows(bin_edges: Sequence[float], counts: Sequence[float], sums: dict[str, Sequence[float]]
         ) -> list[dict[str, float | None]]:
    """One row per bin: its range, the number of steps, and the mean of every metric over those steps."""
    out = []
    for b, n in enumerate(counts):
        row: dict[str, float | None] = {"low": float(bin_edges[b]), "high": float(bin_edges[b + 1]), "steps": int(n)}
        row.update({name: (float(s[b]) / n if n else None) for name, s in sums.items()})
        out.append(row)
    return out
