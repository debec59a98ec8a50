"""Wall time and env steps to the tracking threshold: rl_core's runner vs rsl_rl's runner on quadruped-flat.

Both trainers train the same env class with the same seed, networks, PPO hyperparameters, rollout length and
number of envs, one after the other in this process, each for the same wall-clock budget. After every
iteration the bench reads the tracking errors of that iteration's rollout (the env's own per-step
``lin_vel_error`` / ``yaw_rate_error``, averaged over the iteration) and reports the first iteration at which
both are at or below the thresholds.

    python -m bench.trainers                          # 2048 envs, 600 s per trainer, CPU
    python -m bench.trainers --budget-s 300 --num-envs 1024

Needs the bench extra (rsl-rl-lib 5.5.1): pip install -e ".[bench]".
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import torch


class MetricsTap:
    """Wraps an env and sums the per-step tracking errors it logs (on device); read once per iteration."""

    NAMES = ("lin_vel_error", "yaw_rate_error", "terminated")

    def __init__(self, env: Any):
        self.env = env
        self._sum = {k: torch.zeros((), device=env.device) for k in self.NAMES}
        self._steps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, actions: torch.Tensor) -> Any:
        out = self.env.step(actions)
        for k in self.NAMES:
            self._sum[k] += out[4]["log"][k]
        self._steps += 1
        return out

    def read(self) -> dict[str, float]:
        values = {k: (v / max(1, self._steps)).item() for k, v in self._sum.items()}
        for v in self._sum.values():
            v.zero_()
        self._steps = 0
        return values


def race(name: str, iterate: Callable[[], None], tap: MetricsTap, samples_per_iter: int, budget_s: float,
         lin_thr: float, yaw_thr: float) -> dict[str, Any]:
    start = time.perf_counter()
    reached: dict[str, Any] | None = None
    it = 0
    m: dict[str, float] = {}
    while time.perf_counter() - start < budget_s:
        iterate()
        it += 1
        m = tap.read()
        wall = time.perf_counter() - start
        if reached is None and m["lin_vel_error"] <= lin_thr and m["yaw_rate_error"] <= yaw_thr:
            reached = {"iteration": it, "wall_s": wall, "env_steps": it * samples_per_iter}
        if it % 10 == 0:
            print(f"  {name:7s} it {it:4d}  {wall:6.0f} s  lin err {m['lin_vel_error']:.3f}  "
                  f"yaw err {m['yaw_rate_error']:.3f}", flush=True)
    return {"trainer": name, "iterations": it, "wall_s": time.perf_counter() - start, "final": m, "reached": reached}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget-s", type=float, default=600.0, help="wall-clock budget per trainer (s)")
    p.add_argument("--num-envs", type=int, default=None, help="envs (default: the task's default)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lin-threshold", type=float, default=0.15, help="linear velocity tracking error (m/s)")
    p.add_argument("--yaw-threshold", type=float, default=0.25, help="yaw-rate tracking error (rad/s)")
    p.add_argument("--only", choices=["rl_core", "rsl_rl"], help="run one trainer only")
    args = p.parse_args(argv)

    from configs.catalog import get_task
    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from rl_core.runner import OnPolicyRunner

    cfg = get_task("quadruped-flat").default_config()
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=args.seed, max_iterations=100_000))
    if args.num_envs:
        cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=args.num_envs))
    batch = cfg.batch_size
    device = torch.device(cfg.runner.device)
    print(f"quadruped-flat, {cfg.env.num_envs} envs x {cfg.runner.num_steps_per_env} steps, seed {args.seed}, "
          f"budget {args.budget_s:.0f} s per trainer, threshold lin <= {args.lin_threshold} m/s, "
          f"yaw <= {args.yaw_threshold} rad/s (training rollouts)")
    results = []
    if args.only in (None, "rl_core"):
        torch.manual_seed(args.seed)
        tap = MetricsTap(LocomotionEnv(cfg.env, QUADRUPED, device))
        runner = OnPolicyRunner(tap, cfg, task="quadruped-flat", quiet=True)  # type: ignore[arg-type]
        results.append(race("rl_core", lambda: runner.learn(num_iterations=1), tap, batch, args.budget_s,
                            args.lin_threshold, args.yaw_threshold))
    if args.only in (None, "rsl_rl"):
        from rsl_rl.runners import OnPolicyRunner as RslRunner

        from apps.adapters.rsl_rl import RslRlVecEnv, rsl_rl_train_cfg

        torch.manual_seed(args.seed)
        tap = MetricsTap(LocomotionEnv(cfg.env, QUADRUPED, device))
        env = RslRlVecEnv(tap, seed=args.seed)
        rsl = RslRunner(env, rsl_rl_train_cfg(cfg), log_dir=None, device=str(device))
        def rsl_iteration() -> None:
            rsl.learn(1, init_at_random_ep_len=False)  # our env already randomizes the initial episode clocks

        results.append(race("rsl_rl", rsl_iteration, tap, batch, args.budget_s, args.lin_threshold, args.yaw_threshold))

    print()
    print(f"| trainer | iterations in {args.budget_s:.0f} s | wall s to threshold | env steps to threshold "
          "| final lin err | final yaw err |")
    print("|---|---|---|---|---|---|")
    for r in results:
        hit = r["reached"]
        wall = f"{hit['wall_s']:.0f}" if hit else "not reached"
        steps = f"{hit['env_steps']:,}" if hit else "-"
        print(f"| {r['trainer']} | {r['iterations']} | {wall} | {steps} | {r['final']['lin_vel_error']:.3f} | "
              f"{r['final']['yaw_rate_error']:.3f} |")
    if len(results) == 2 and all(r["reached"] for r in results):
        ratio = results[1]["reached"]["wall_s"] / results[0]["reached"]["wall_s"]
        print(f"rsl_rl / rl_core wall time to threshold: {ratio:.2f}x")


if __name__ == "__main__":
    main()
