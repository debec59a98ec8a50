"""Env throughput of quadruped-flat per physics backend, against raw stepping of the same backend.

For each backend: (1) raw physics: ``physics.step`` with fixed controls (the substeps only, no task logic; on
warp the graph-captured mujoco_warp substeps);
(2) the full env: ``env.step`` (physics + observations, rewards, resets, randomization). The ratio
env / raw is the share of the physics speed that the task logic keeps.

    python -m bench.env_throughput                                 # native backend, 2048 envs
    python -m bench.env_throughput --backend mjx --device cuda --num-envs 4096 8192
    python -m bench.env_throughput --backend warp --device cuda --num-envs 4096 8192 16384
    python -m bench.env_throughput --backend mjx --collisions feet --solver-iterations 1 --ls-iterations 5
"""

from __future__ import annotations

import argparse
import json
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="native", choices=["native", "mjx", "warp"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--num-envs", type=int, nargs="+", default=[2048])
    p.add_argument("--steps", type=int, default=50, help="control steps timed per measurement")
    p.add_argument("--mjx-impl", default="jax", choices=["jax", "warp"], help="MJX implementation (backend mjx)")
    p.add_argument("--collisions", default="full", choices=["full", "feet"], help="env.collisions")
    p.add_argument("--solver-iterations", type=int, default=None, help="env.solver_iterations (default: the model's)")
    p.add_argument("--ls-iterations", type=int, default=None, help="env.ls_iterations (default: the model's)")
    p.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    args = p.parse_args(argv)

    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion_config import LocomotionEnvConfig

    device = torch.device(args.device)
    default = "the model's"
    print(f"collisions {args.collisions}, solver iterations {args.solver_iterations or default}, "
          f"line-search iterations {args.ls_iterations or default}")
    print("| backend | device | envs | raw physics steps/s | env steps/s (samples/s) | env / raw |")
    print("|---|---|---|---|---|---|")
    rows = []
    for n in args.num_envs:
        t0 = time.perf_counter()
        env = LocomotionEnv(LocomotionEnvConfig(num_envs=n, backend=args.backend, mjx_impl=args.mjx_impl,
                                                collisions=args.collisions, solver_iterations=args.solver_iterations,
                                                ls_iterations=args.ls_iterations), QUADRUPED, device)
        env.reset(seed=0)
        actions = torch.zeros(n, env.num_joints, device=env.device)
        ctrl = env.default_joint_pos.expand(n, env.num_joints).contiguous()
        raw = measure(lambda env=env, ctrl=ctrl: env.physics.step(ctrl), args.steps, env)
        full = measure(lambda env=env, actions=actions: env.step(actions), args.steps, env)
        setup = time.perf_counter() - t0
        substeps = env.cfg.decimation
        print(f"| {args.backend} | {device} | {n} | {n * substeps / raw:,.0f} | {n / full:,.0f} | {raw / full:.2f} |"
              f"  (setup incl. compile {setup:.0f} s)", flush=True)
        rows.append({"backend": args.backend, "device": str(device), "num_envs": n, "collisions": args.collisions,
                     "solver_iterations": env.model.opt.iterations, "ls_iterations": env.model.opt.ls_iterations,
                     "raw_physics_steps_per_s": n * substeps / raw, "env_samples_per_s": n / full,
                     "env_over_raw_control_steps": raw / full})
        env.close()
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
