"""The rollout on the torch threads the env asks for (``rl_core.env_api.NativeThreads``: one on a CPU backend)
against the runner's own count, in one process, taking turns.

    python -m bench.rollout_threads [--task quadruped-flat] [--num-envs N] [--repeats 6] [--json FILE]
    MENAGERIE_ROOT=DIR python -m bench.rollout_threads --task menagerie:unitree_go2+fast

Builds the task's runner as train.py does (bench.profile's ``build_runner``), then times whole iterations
(``runner.collect()`` and the PPO update) with the candidates taking turns after a warm-up round
(``bench/timing.py``), so that the machine's load falls on both alike: ``asked`` is the runner as it trains (the
rollout on ``env.rollout_torch_threads``), ``runner_threads`` the same runner with the env's request ignored (the
rollout on every torch thread, as before). Prints the median seconds per iteration of each, the samples/s and the
ratio asked / runner_threads of the speeds (above 1: the request pays). The policy keeps learning across the
iterations; both candidates run on the same runner, so they see the same tasks and policies in turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import torch

from bench.timing import time_alternating


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.rollout_threads", description=__doc__.split("\n\n")[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--num-envs", type=int, default=0, help="0: the task's default")
    p.add_argument("--repeats", type=int, default=6, help="timed iterations of each candidate")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    args.device, args.overrides = "cpu", []
    return args


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Median seconds per iteration of each candidate, samples/s and the speed ratio asked / runner_threads."""
    from bench.profile import build_runner

    env, cfg, runner = build_runner(args)
    runner.start()
    asked = int(getattr(env, "rollout_torch_threads", 0))

    def iteration() -> None:
        runner.collect()
        runner.alg.update()

    def ignoring_request() -> None:
        env.rollout_torch_threads = 0
        try:
            iteration()
        finally:
            env.rollout_torch_threads = asked

    times = time_alternating({"asked": iteration, "runner_threads": ignoring_request}, args.repeats,
                             torch.device("cpu"))
    samples = cfg.env.num_envs * cfg.runner.num_steps_per_env
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = [b / a for a, b in zip(times["asked"], times["runner_threads"], strict=True)]
    return {"task": args.task, "num_envs": cfg.env.num_envs, "rollout_torch_threads": asked,
            "torch_threads": torch.get_num_threads(), "repeats": args.repeats,
            "seconds_per_iteration": med, "samples_per_s": {k: samples / s for k, s in med.items()},
            "ratio": statistics.median(ratios), "ratio_range": [min(ratios), max(ratios)]}


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    out = measure(args)
    sps = out["samples_per_s"]
    print(f"{out['task']}: {out['num_envs']} envs, rollout on {out['rollout_torch_threads']} torch thread(s) "
          f"(asked) vs {out['torch_threads']} (runner_threads), {out['repeats']} iterations each, taking turns")
    print(f"  asked: {sps['asked']:,.0f} samples/s; runner_threads: {sps['runner_threads']:,.0f} samples/s; "
          f"ratio {out['ratio']:.3f}x ({out['ratio_range'][0]:.3f}-{out['ratio_range'][1]:.3f})")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
