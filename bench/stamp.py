"""Helpers of ``bench/gpu_targets.sh`` (time from a command to the tracking targets).

    python bench/stamp.py T0 < log                       # prefix each line with the seconds since T0 (time.time())
    python bench/stamp.py --checkpoints RUN T0 DEST      # each checkpoint's time since T0; run files to DEST
    python bench/stamp.py --evaluations DIR              # one line per play.py --json file in DIR
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path


def stamp(t0: float) -> None:
    for line in sys.stdin:
        print(f"{time.time() - t0:7.2f} {line}", end="", flush=True)


def checkpoints(run: Path, t0: float, dest: Path) -> None:
    """Lists the checkpoints of ``run`` by write time; copies its small files (summary, config, events) to ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    found = sorted((run / "checkpoints").glob("model_*.pt"), key=lambda p: p.stat().st_mtime)
    for p in found:
        print(f"checkpoint {p.name} written {p.stat().st_mtime - t0:.1f} s after the command started")
    for p in run.glob("*"):
        if p.is_file() and (p.name in ("summary.json", "config.yaml") or p.name.startswith("events.")):
            shutil.copy(p, dest)


def _order(p: Path) -> tuple[str, int]:
    run, _, it = p.stem.rpartition("_")
    return run, int(it) if it.isdigit() else -1


def evaluations(folder: Path) -> None:
    for p in sorted(folder.glob("*.json"), key=_order):
        d = json.loads(p.read_text())
        swing = " ".join(f"{k[len('swing_'):]} {v:.2f}" for k, v in d.items() if k.startswith("swing_"))
        print(f"{p.stem}: lin {d['lin_vel_tracking_error']:.3f} yaw {d['yaw_rate_tracking_error']:.3f} "
              f"falls {d['fall_rate']:.0%} swing {swing}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["--checkpoints"]:
        checkpoints(Path(a[1]), float(a[2]), Path(a[3]))
    elif a[:1] == ["--evaluations"]:
        evaluations(Path(a[1]))
    else:
        stamp(float(a[0]))
