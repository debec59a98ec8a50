"""Env throughput of a locomotion task per physics backend, against raw stepping of the same backend and scene.

For each backend: (1) raw physics: ``physics.step`` with fixed controls (the substeps only, no task logic; on
warp the graph-captured mujoco_warp substeps), on the task's own scene (its heightfield on generated terrain);
(2) the full env: ``env.step`` (physics + observations, rewards, resets, randomization; on terrain also the
height scan, the curriculum and the terrain bookkeeping). The ratio env / raw is the share of the physics speed
that the task logic keeps. ``--repeats`` alternates the two measurements (raw, env, raw, env, ...) and reports
the medians and the median of the per-pair ratios: on a busy machine the pairs see the same load.

    python -m bench.env_throughput                                 # quadruped-flat, native backend, 2048 envs
    python -m bench.env_throughput --task quadruped-rough --num-envs 1024 --repeats 5
    python -m bench.env_throughput --backend mjx --device cuda --num-envs 4096 8192
    python -m bench.env_throughput --backend warp --device cuda --num-envs 4096 8192 16384
    python -m bench.env_throughput --backend mjx --collisions feet --solver-iterations 1 --ls-iterations 5
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path

import torch


def measure(fn, steps: int, env) -> float:
    """Seconds per call; reading a value of the state waits for asynchronous (JAX / CUDA) work to finish."""
    for _ in range(5):  # warm-up (and JIT compilation on MJX)
        fn()
    env.physics.read().qpos[0, 0].item()
    t = time.perf_counter()
    for _ in range(steps):
        fn()
    env.physics.read().qpos[0, 0].item()
    return (time.perf_counter() - t) / steps


def _parse(argv: list[str] | None) -> argparse.Namespace:
    from envs.physics.registry import BACKENDS
    from envs.robots.checks import COLLISIONS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat", help="a registered locomotion task (its default env config)")
    p.add_argument("--backend", default="native", choices=BACKENDS)
    p.add_argument("--device", default="cpu")
    p.add_argument("--num-envs", type=int, nargs="+", default=[2048])
    p.add_argument("--steps", type=int, default=50, help="control steps timed per measurement")
    p.add_argument("--repeats", type=int, default=1, help="interleaved raw / env measurement pairs (medians reported)")
    p.add_argument("--mjx-impl", default="jax", choices=["jax", "warp"], help="MJX implementation (backend mjx)")
    p.add_argument("--collisions", default=None, choices=COLLISIONS, help="env.collisions (default: the task's)")
    p.add_argument("--solver-iterations", type=int, default=None, help="env.solver_iterations (default: the model's)")
    p.add_argument("--ls-iterations", type=int, default=None, help="env.ls_iterations (default: the model's)")
    p.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    return p.parse_args(argv)


def _one_size(args: argparse.Namespace, spec, task_env, collisions: str, n: int) -> dict:
    """Raw physics and full env steps of ``n`` envs, ``args.repeats`` interleaved pairs; prints the table row."""
    from envs.tasks.locomotion import LocomotionEnv

    t0 = time.perf_counter()
    device = torch.device(args.device)
    cfg = dataclasses.replace(task_env, num_envs=n, backend=args.backend, mjx_impl=args.mjx_impl,
                              collisions=collisions, solver_iterations=args.solver_iterations,
                              ls_iterations=args.ls_iterations)
    env = spec.make_env(cfg, device)
    assert isinstance(env, LocomotionEnv), f"{args.task} is not a locomotion task"
    env.reset(seed=0)
    actions = torch.zeros(n, env.num_joints, device=env.device)
    ctrl = env.default_joint_pos.expand(n, env.num_joints).contiguous()
    raws, fulls = [], []
    for _ in range(args.repeats):
        raws.append(measure(lambda env=env, ctrl=ctrl: env.physics.step(ctrl), args.steps, env))
        fulls.append(measure(lambda env=env, actions=actions: env.step(actions), args.steps, env))
    raw, full = statistics.median(raws), statistics.median(fulls)
    ratios = [r / f for r, f in zip(raws, fulls, strict=True)]
    setup = time.perf_counter() - t0
    substeps = env.cfg.decimation
    spread = f", env / raw per pair {min(ratios):.2f}-{max(ratios):.2f}" if args.repeats > 1 else ""
    print(f"| {args.task} | {args.backend} | {device} | {n} | {n * substeps / raw:,.0f} | {n / full:,.0f} | "
          f"{statistics.median(ratios):.2f} |  (total incl. setup and compile {setup:.0f} s{spread})", flush=True)
    row = {"task": args.task, "backend": args.backend, "device": str(device), "num_envs": n,
           "collisions": collisions, "solver_iterations": env.model.opt.iterations,
           "ls_iterations": env.model.opt.ls_iterations, "repeats": args.repeats,
           "raw_physics_steps_per_s": n * substeps / raw, "env_samples_per_s": n / full,
           "env_over_raw_control_steps": statistics.median(ratios), "raw_s_per_step": raws, "env_s_per_step": fulls}
    env.close()
    return row


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    from configs.catalog import get_task

    spec = get_task(args.task)
    task_env = spec.default_config().env
    default = "the model's"
    collisions = args.collisions or getattr(task_env, "collisions", "full")
    print(f"task {args.task}, collisions {collisions}, solver iterations {args.solver_iterations or default}, "
          f"line-search iterations {args.ls_iterations or default}, {args.repeats} interleaved repeat(s)")
    print("| task | backend | device | envs | raw physics steps/s | env steps/s (samples/s) | env / raw |")
    print("|---|---|---|---|---|---|---|")
    rows = [_one_size(args, spec, task_env, collisions, n) for n in args.num_envs]
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
