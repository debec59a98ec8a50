"""Per-tick timing of the runtime: when each tick woke, how long the observation, the inference and the write
took, whether the command went out before the deadline; p50 / p99 / max; a CSV log with one row per tick."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

COLUMNS = ("tick", "late_ms", "read_ms", "obs_ms", "inference_ms", "write_ms", "total_ms", "missed", "mode")
"""CSV columns: ``late_ms`` how long after its scheduled start the tick woke; ``total_ms`` from the scheduled
start to the end of the write (the deadline is one control period after the scheduled start)."""


class TickLog:
    """Rows of ``COLUMNS``, kept in memory (a 60 s run at 50 Hz is 3000 rows) and written at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(self, tick: int, late: float, read: float, obs: float, inference: float, write: float, total: float,
            missed: bool, mode: str) -> None:
        self.rows.append((tick, 1e3 * late, 1e3 * read, 1e3 * obs, 1e3 * inference, 1e3 * write, 1e3 * total,
                          int(missed), mode))

    def write_csv(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for r in self.rows:
                w.writerow([f"{x:.4f}" if isinstance(x, float) else x for x in r])

    def summary(self, skip: int = 0) -> dict[str, Any]:
        """p50 / p99 / max (ms) of each duration and the number of missed deadlines, over the ticks after the first
        ``skip`` (the first inference of a session is slow: onnxruntime allocates)."""
        rows = self.rows[skip:]
        out: dict[str, Any] = {"ticks": len(rows), "missed_deadlines": int(sum(r[7] for r in rows))}
        if not rows:
            return out
        for i, name in enumerate(COLUMNS[1:7], start=1):
            x = np.array([r[i] for r in rows])
            out[name] = {"p50": round(float(np.percentile(x, 50)), 4), "p99": round(float(np.percentile(x, 99)), 4),
                         "max": round(float(x.max()), 4)}
        return out


