"""End-to-end training throughput of a task: samples/s, the split between collection and learning, peak memory.

    python -m bench.end_to_end [--task quadruped-flat] [--iterations 10] [--num-envs N] [--device cpu|cuda]
        [KEY=VALUE ...]

Runs ``--iterations`` PPO iterations after ``--warmup`` (compilation, allocator) with the task's defaults and
reports medians of the per-iteration timings. On the CPU it also times every physics step (native stepping is
synchronous), and splits the run into physics, the PPO update, and everything else (task logic, policy
inference during the rollout, storage, GAE).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

import torch


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--num-envs", type=int)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    p.add_argument("overrides", nargs="*", help="config overrides as for train.py, e.g. env.collisions=feet")
    args = p.parse_args(argv)

    from bench.profile import build_runner

    env, cfg, runner = build_runner(args)
    runner.start()
    physics = getattr(env, "physics", None)
    physics_s = [0.0]
    if physics is not None and args.device == "cpu":  # native stepping is synchronous: wall time is its cost
        step = physics.step

        def timed_step(ctrl):
            t = time.perf_counter()
            step(ctrl)
            physics_s[0] += time.perf_counter() - t

        physics.step = timed_step
    collect_s, learn_s = [], []
    for i in range(args.warmup + args.iterations):
        if i == args.warmup:
            physics_s[0] = 0.0
        t0 = time.perf_counter()
        runner.alg.set_iteration(i)
        runner.collect()
        runner.storage.values.sum().item()  # wait for the device
        t1 = time.perf_counter()
        runner.alg.update()
        runner.policy.head.mean_std().item()
        t2 = time.perf_counter()
        if i >= args.warmup:
            collect_s.append(t1 - t0)
            learn_s.append(t2 - t1)
    env.close()
    batch = cfg.batch_size
    c, lrn = statistics.median(collect_s), statistics.median(learn_s)
    total = sum(collect_s) + sum(learn_s)
    physics_share = physics_s[0] / total if physics_s[0] else None
    result = {"task": args.task, "device": args.device, "overrides": args.overrides, "num_envs": cfg.env.num_envs,
              "steps_per_env": cfg.runner.num_steps_per_env, "samples_per_s": batch / (c + lrn),
              "collection_s": c, "learning_s": lrn, "collection_share": c / (c + lrn),
              "physics_share": physics_share, "learning_share": sum(learn_s) / total,
              "other_share": 1.0 - sum(learn_s) / total - physics_share if physics_share is not None else None,
              "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "peak_cuda_mib": torch.cuda.max_memory_allocated() / 2**20 if args.device.startswith("cuda") else None}
    print(f"{args.task} on {args.device}: {cfg.env.num_envs} envs x {cfg.runner.num_steps_per_env} steps: "
          f"{result['samples_per_s']:,.0f} samples/s (collection {c:.2f} s, learning {lrn:.2f} s per iteration); "
          + (f"physics {physics_share:.0%}, PPO update {result['learning_share']:.0%}, everything else "
             f"{result['other_share']:.0%} of the time; " if physics_share is not None else "")
          + f"peak RSS {result['peak_rss_mib']:.0f} MiB"
          + (f", peak CUDA {result['peak_cuda_mib']:.0f} MiB" if result["peak_cuda_mib"] is not None else ""))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
