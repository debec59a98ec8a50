"""Train a task with its default config for several seeds and print a results table row per seed.

    python -m tools.experiments.seed_sweep --task CartPole-v1 --seeds 1 2 3 [--out-dir runs/sweeps]
                                           [extra train.py args ...]

This is the command behind the README's results table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--out-dir", type=Path, default=Path("runs/sweeps"))
    args, extra = p.parse_known_args()
    rows = []
    for seed in args.seeds:
        run_dir = args.out_dir / args.task / f"seed{seed}"
        cmd = [sys.executable, str(ROOT / "train.py"), "--task", args.task, "--seed", str(seed),
               "--run-dir", str(run_dir), "--quiet", *extra]
        if subprocess.run(cmd).returncode != 0:
            print(f"error: {' '.join(cmd)} failed", file=sys.stderr)
            return 1
        rows.append(json.loads((run_dir / "summary.json").read_text()) | {"seed": seed})
    print("| task | seed | env steps | mean return (last 100 episodes) | wall time (s) | samples/s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['task']} | {r['seed']} | {r['env_steps']:,} | {r['mean_episode_return']:.1f} | "
              f"{r['wall_time_s']:.0f} | "
              f"{r['samples_per_s']:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
