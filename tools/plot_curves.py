"""Plot learning curves (mean episode return vs env steps) of one or more run folders into a PNG.

    python tools/plot_curves.py runs/BipedalWalker-v3/<run> [more runs ...] --out docs/bipedalwalker.png
"""

from __future__ import annotations

import argparse
from pathlib import Path


def load_curve(run: Path, tag: str) -> tuple[list[int], list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    if tag not in acc.Tags()["scalars"]:
        raise SystemExit(f"error: {run} has no scalar '{tag}'")
    events = acc.Scalars(tag)
    return [e.step for e in events], [e.value for e in events]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--tag", default="Episode/mean_return")
    p.add_argument("--title", default=None)
    args = p.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for run in args.runs:
        steps, values = load_curve(run, args.tag)
        ax.plot(steps, values, label=run.name)
    ax.set_xlabel("env steps")
    ax.set_ylabel(args.tag + " (last 100 episodes)")
    ax.set_title(args.title or args.runs[0].parent.name)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
