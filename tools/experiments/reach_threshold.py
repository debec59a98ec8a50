"""Env steps (and wall time) until an ``arm-reach`` run's training episodes first end within the distance threshold.

    python -m tools.experiments.reach_threshold runs/arm-reach/<run> [--threshold 0.02]

Reads each run's TensorBoard scalar ``Episode/final_distance`` (the mean fingertip-to-target distance at the end
of the last 100 finished training episodes: stochastic policy, observation noise) and prints the first
iteration where it is within the threshold (m), with its env steps and the wall time since the first iteration
started. docs/reach.md uses it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tools.plot_curves import read_scalars


def first_reached(run: Path, threshold: float) -> dict[str, Any]:
    """The first iteration (1-based) within ``threshold``, its env steps and wall time; None values when never."""
    s = read_scalars(run)
    final = s["Episode/final_distance"]
    start = s["Perf/collection_time_s"][0]
    t0 = start.wall_time - start.value - s["Perf/learning_time_s"][0].value
    row: dict[str, Any] = {"run": str(run), "iterations": len(s["Perf/samples_per_s"]), "iteration": None,
                           "env_steps": None, "wall_s": None}
    steps = [p.step for p in s["Perf/samples_per_s"]]
    for point in final:
        if point.value <= threshold:
            row.update(iteration=steps.index(point.step) + 1, env_steps=point.step,
                       wall_s=round(point.wall_time - t0, 1), final_distance=round(point.value, 4))
            break
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--threshold", type=float, default=0.02, help="final distance (m), default 0.02")
    args = p.parse_args()
    for run in args.runs:
        print(json.dumps(first_reached(run, args.threshold)))


if __name__ == "__main__":
    main()
