"""Learning curve of a locomotion run: tracking errors vs wall time, with the deterministic evaluation of
every checkpoint, and the thresholds. Writes a PNG and a JSON of the evaluations.

    python -m tools.experiments.tracking_curve runs/quadruped-flat/<run> --out docs/quadruped_curve.png

Lines: the training rollouts' errors per iteration (stochastic policy, noise, pushes). Markers: ``play.py``
on each checkpoint (deterministic policy, 100 episodes of 20 s, commands from the training ranges).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.plot_curves import finish, read_scalars

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path)
    p.add_argument("--out", type=Path, required=True, help="PNG to write (the JSON goes next to it)")
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--no-eval", action="store_true", help="plot the training curves only")
    p.add_argument("--lin-threshold", type=float, default=0.15)
    p.add_argument("--yaw-threshold", type=float, default=0.25)
    args = p.parse_args()

    s = read_scalars(args.run)
    lin, yaw = s["Env/lin_vel_error"], s["Env/yaw_rate_error"]
    # Scalars are logged once per iteration, with the env-step count as their step.
    first = s["Perf/collection_time_s"][0].value + s["Perf/learning_time_s"][0].value
    t0 = lin[0].wall_time - first  # start of the first iteration
    wall = {i + 1: e.wall_time - t0 for i, e in enumerate(lin)}  # iteration -> wall time
    # strict=False: a run killed mid-write may hold one more scalar of one tag than of the other
    reached = next((i + 1 for i, (a, b) in enumerate(zip(lin, yaw, strict=False))
                    if a.value <= args.lin_threshold and b.value <= args.yaw_threshold), None)
    if reached:
        print(f"training rollouts reach the thresholds at iteration {reached}, {lin[reached - 1].step:,} env steps, "
              f"{wall[reached]:.0f} s")

    evals = []
    if not args.no_eval:
        for ck in sorted((args.run / "checkpoints").glob("model_*.pt"), key=lambda q: int(q.stem.split("_")[1])):
            it = int(ck.stem.split("_")[1])
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(ck), "--episodes",
                                str(args.episodes), "--json", f.name], check=True, stdout=subprocess.DEVNULL)
                m = json.loads(Path(f.name).read_text())
            m["wall_s"] = wall.get(it)
            evals.append(m)
            print(f"iteration {it:4d}  {m['wall_s'] or 0:6.0f} s  lin {m['lin_vel_tracking_error']:.3f}  "
                  f"yaw {m['yaw_rate_tracking_error']:.3f}  falls {m['fall_rate']:.2f}", flush=True)
        args.out.with_suffix(".json").write_text(json.dumps(evals, indent=2) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot([wall[i + 1] for i in range(len(lin))], [e.value for e in lin], color="C0", alpha=0.6,
            label="lin. vel. error, training (m/s)")
    ax.plot([wall[i + 1] for i in range(len(yaw))], [e.value for e in yaw], color="C1", alpha=0.6,
            label="yaw-rate error, training (rad/s)")
    ev = [m for m in evals if m["wall_s"] is not None]
    if ev:
        at = [m["wall_s"] for m in ev]
        ax.plot(at, [m["lin_vel_tracking_error"] for m in ev], "o-", color="C0", label="lin. vel. error, evaluation")
        ax.plot(at, [m["yaw_rate_tracking_error"] for m in ev], "s-", color="C1", label="yaw-rate error, evaluation")
        ax.plot(at, [m["fall_rate"] for m in ev], "x:", color="C3", label="fall rate, evaluation")
    ax.axhline(args.lin_threshold, color="C0", linestyle="--", linewidth=0.8)
    ax.axhline(args.yaw_threshold, color="C1", linestyle="--", linewidth=0.8)
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("error / fall rate")
    ax.set_ylim(0, 1.0)
    config = args.run / "config.yaml"
    first = config.read_text().splitlines()[0] if config.exists() else ""
    task = first.removeprefix("# task: ") if first.startswith("# task: ") else "locomotion"
    ax.set_title(f"{task}: {args.run}")
    finish(fig, ax, args.out)


if __name__ == "__main__":
    main()
