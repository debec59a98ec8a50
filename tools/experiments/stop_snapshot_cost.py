"""What keeping the last completed iteration in memory costs (``runner.stop_grace_s``, rl_core/stopping.py): the
time of one copy of the runner's state per iteration, and of writing it as a checkpoint, beside an iteration's.

    python -m tools.experiments.stop_snapshot_cost --task humanoid-track --task quadruped-flat
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=None, help="a task (repeatable; default humanoid-track)")
    parser.add_argument("--iterations", type=int, default=2, help="iterations run before measuring")
    args = parser.parse_args()
    import torch

    from configs.catalog import get_task
    from rl_core import checkpoint as ckpt
    from rl_core.runner import OnPolicyRunner

    for name in args.task or ["humanoid-track"]:
        spec = get_task(name)
        cfg = spec.default_config()
        cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, max_iterations=args.iterations))
        env = spec.make_env(cfg.env, torch.device(cfg.runner.device))
        with tempfile.TemporaryDirectory() as folder:
            runner = OnPolicyRunner(env, cfg, task=name, run_dir=folder, quiet=True)
            start = time.perf_counter()
            runner.learn()
            iteration = (time.perf_counter() - start) / args.iterations
            start = time.perf_counter()
            copy.deepcopy(runner.state_dict())
            with_envs = time.perf_counter() - start
            start = time.perf_counter()
            state = copy.deepcopy(runner.state_dict(with_env=False))  # what the runner keeps (_remember_state)
            copied = time.perf_counter() - start
            start = time.perf_counter()
            ckpt.save_atomic(state, Path(folder) / "checkpoints" / "snapshot.pt")
            written = time.perf_counter() - start
        env.close()
        print(f"{name}: {cfg.env.num_envs} envs, an iteration {iteration:.2f} s (first {args.iterations}, with "
              f"start-up), the kept state (no envs) copied in {copied * 1000:.1f} ms (with the envs' state "
              f"{with_envs * 1000:.1f} ms), written in {written * 1000:.0f} ms")


if __name__ == "__main__":
    main()
