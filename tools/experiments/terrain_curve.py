"""Mean terrain level (and episode success) vs wall time of rough-terrain runs, from their TensorBoard logs.

    python -m tools.experiments.terrain_curve runs/quadruped-rough/<run> [more runs ...] --out docs/terrain_level.png

The x axis is training wall time: a pause of more than a minute between two iterations (a run stopped and
resumed with ``--resume``) is left out. Left axis: ``Env/terrain_level`` (the envs' mean curriculum level, 0 to
levels - 1). Right axis: the share of recent episodes that travelled ``env.success_distance`` from their start
(``Episode/success``), when logged.
"""

from __future__ import annotations

import argparse
from itertools import pairwise
from pathlib import Path

from tools.plot_curves import read_scalars

LEVEL_TAG = "Env/terrain_level"
SUCCESS_TAGS = ("Episode/success", "Env/success")


PAUSE_S = 60.0
"""A gap between two logged iterations longer than this is a pause (stop and resume), not training time."""


def training_minutes(times: list[float]):
    """A function: wall time of an event -> minutes of training before it, pauses longer than PAUSE_S left out
    (``times``: the wall times of every iteration, in order)."""
    starts, offsets = [times[0]], [0.0]
    for a, b in pairwise(times):
        if b - a > PAUSE_S:
            offsets.append(offsets[-1] + (a - starts[-1]))
            starts.append(b)

    def clock(t: float) -> float:
        k = max(i for i, s in enumerate(starts) if s <= t) if t >= starts[0] else 0
        return (offsets[k] + t - starts[k]) / 60

    return clock


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = p.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    right = ax.twinx()
    for run in args.runs:
        scalars = read_scalars(run)
        if LEVEL_TAG not in scalars:
            raise SystemExit(f"error: {run} has no scalar '{LEVEL_TAG}' (not a generated-terrain run?)")
        events = scalars[LEVEL_TAG]
        clock = training_minutes([e.wall_time for e in events])
        line, = ax.plot([clock(e.wall_time) for e in events], [e.value for e in events],
                        label=f"{run.name}: mean level")
        for tag in SUCCESS_TAGS:
            if tag in scalars:
                s = scalars[tag]
                right.plot([clock(e.wall_time) for e in s], [e.value for e in s], ls=":", color=line.get_color(),
                           label=f"{run.name}: success")
                break
    ax.set_xlabel("training wall time (min; pauses of a resumed run left out)")
    ax.set_ylabel("mean terrain level")
    right.set_ylabel("episodes travelling 4 m (share)")
    right.set_ylim(0, 1)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(handles=handles, fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
