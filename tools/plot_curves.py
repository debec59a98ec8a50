"""Plot learning curves (mean episode return vs env steps) of one or more run folders into a PNG.

    python -m tools.plot_curves runs/BipedalWalker-v3/<run> [more runs ...] --out docs/bipedalwalker.png
    python -m tools.plot_curves RUN --tag Episode/game_score --frames-per-step 4 \
        --reference docs/breakout_reference.json --out docs/breakout_cpu_1h.png

``--reference FILE``: published points to draw beside the runs, JSON ``{"curves": [{"label": ..., "points":
[[x, y], ...]}]}`` with x in the plot's unit (env steps, or frames with ``--frames-per-step``).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def read_scalars(run: Path) -> dict[str, list]:
    """Every TensorBoard scalar of a run folder: tag -> events (step, wall_time, value)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: acc.Scalars(tag) for tag in acc.Tags()["scalars"]}


def load_curve(run: Path, tag: str) -> tuple[list[int], list[float]]:
    scalars = read_scalars(run)
    if tag not in scalars:
        raise SystemExit(f"error: {run} has no scalar '{tag}'")
    return [e.step for e in scalars[tag]], [e.value for e in scalars[tag]]


def finish(fig, ax, out: Path) -> None:
    """Grid, legend, layout; write the PNG."""
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--tag", default="Episode/mean_return")
    p.add_argument("--title", default=None)
    p.add_argument("--frames-per-step", type=int, default=None, help="x axis in frames: env steps x this (Atari: 4)")
    p.add_argument("--reference", type=Path, default=None, help="JSON of published curves to plot beside the runs")
    args = p.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    scale = args.frames_per_step or 1
    for run in args.runs:
        steps, values = load_curve(run, args.tag)
        ax.plot([s * scale for s in steps], values, label=run.name)
    if args.reference is not None:
        import json

        for curve in json.loads(args.reference.read_text())["curves"]:
            xs, ys = zip(*curve["points"], strict=True)
            ax.plot(xs, ys, "o--", ms=4, label=curve["label"])
    ax.set_xlabel("frames" if args.frames_per_step else "env steps")
    ax.set_ylabel(args.tag + " (last 100 episodes)")
    ax.set_title(args.title or args.runs[0].parent.name)
    finish(fig, ax, args.out)


if __name__ == "__main__":
    main()
