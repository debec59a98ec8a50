"""Env steps (and wall time) until a locomotion run's training rollouts first track within the thresholds.

    python -m tools.experiments.samples_to_threshold runs/symmetry/none/quadruped-flat/seed* [--json out.json]

Reads each run's TensorBoard scalars ``Env/lin_vel_error`` and ``Env/yaw_rate_error`` (the rollouts' means per
iteration: stochastic policy, noise, pushes) and prints the first iteration where both are within the
thresholds, one row per run and their mean. The comparison of symmetry augmentation in docs/learner.md uses it.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from tools.plot_curves import read_scalars


def first_reached(run: Path, lin_threshold: float, yaw_threshold: float) -> dict[str, Any]:
    """The first iteration (1-based), its env steps and wall time (s since the first iteration started) at which
    both errors are within their thresholds; None values when never."""
    s = read_scalars(run)
    lin, yaw = s["Env/lin_vel_error"], s["Env/yaw_rate_error"]
    start = lin[0].wall_time - s["Perf/collection_time_s"][0].value - s["Perf/learning_time_s"][0].value
    row: dict[str, Any] = {"run": str(run), "iterations": len(lin), "iteration": None, "env_steps": None,
                           "wall_s": None}
    # strict=False: a run killed mid-write may hold one more scalar of one tag than of the other
    for i, (a, b) in enumerate(zip(lin, yaw, strict=False)):
        if a.value <= lin_threshold and b.value <= yaw_threshold:
            row.update(iteration=i + 1, env_steps=a.step, wall_s=round(a.wall_time - start, 1))
            break
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--lin-threshold", type=float, default=0.15)
    p.add_argument("--yaw-threshold", type=float, default=0.25)
    p.add_argument("--json", type=Path, help="write the rows to this file")
    args = p.parse_args()
    rows = [first_reached(run, args.lin_threshold, args.yaw_threshold) for run in args.runs]
    print(f"| run | iterations run | first iteration with lin <= {args.lin_threshold} and yaw <= {args.yaw_threshold} "
          "| env steps | wall time (s) |")
    print("|---|---|---|---|---|")
    for r in rows:
        reached = r["iteration"] is not None
        print(f"| {r['run']} | {r['iterations']} | {r['iteration'] if reached else 'not reached'} | "
              f"{format(r['env_steps'], ',') if reached else '-'} | {r['wall_s'] if reached else '-'} |")
    steps = [r["env_steps"] for r in rows if r["env_steps"] is not None]
    if steps:
        print(f"mean env steps over the {len(steps)} of {len(rows)} runs that reached: {statistics.mean(steps):,.0f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
