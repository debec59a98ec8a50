"""Training samples/s of every registered MuJoCo task at several batch sizes, against the physics alone, in one process
per task (its kernels load once; each size builds its own env and runner).

    python -m bench.samples_rate --device cuda --num-envs 4096 16384            # every registered MuJoCo task
    python -m bench.samples_rate --device cpu --num-envs 32 --iterations 2 --task quadruped-flat   # a dry run

Per task and size: ``--warmup`` PPO iterations (kernels, CUDA graph captures), then the medians of ``--iterations``
timed ones (collection, learning, samples/s), and the physics alone: ``physics.step`` with fixed controls, timed
over as many control steps as a rollout has (``physics samples/s``: worlds x control steps per second). The ratio
end-to-end / physics is the share of the physics' speed the whole training keeps. Tasks that cannot train alone
(distillation: needs a teacher checkpoint) are left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", action="append", help="a registered MuJoCo task (repeatable; default: all of them)")
    p.add_argument("--num-envs", type=int, nargs="+", default=[4096, 16384])
    p.add_argument("--device", default="cuda")
    p.add_argument("--iterations", type=int, default=5, help="timed PPO iterations (medians)")
    p.add_argument("--warmup", type=int, default=2, help="untimed PPO iterations first")
    p.add_argument("--json", type=Path, help="also write the rows to this file")
    return p.parse_args(argv)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _physics_rate(env: Any, steps: int) -> float:
    """Worlds x control steps per second of ``physics.step`` with fixed controls: every servo holds its joint's
    angle at the start."""
    physics, device, model = env.physics, env.device, env.model
    columns = torch.as_tensor(model.jnt_qposadr[model.actuator_trnid[:, 0]], device=device)
    ctrl = physics.read().qpos[:, columns].contiguous()
    for _ in range(3):
        physics.step(ctrl)
    _sync(device)
    t = time.perf_counter()
    for _ in range(steps):
        physics.step(ctrl)
    _sync(device)
    return env.num_envs * steps / (time.perf_counter() - t)


def measure(task: str, num_envs: int, args: argparse.Namespace) -> dict[str, Any]:
    """One row: end-to-end and physics-only samples/s of ``task`` at ``num_envs``."""
    from configs.catalog import get_task
    from rl_core.runner import OnPolicyRunner

    spec = get_task(task)
    cfg = spec.default_config()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=num_envs),
                              runner=dataclasses.replace(cfg.runner, device=args.device))
    device = torch.device(args.device)
    env: Any = spec.make_env(cfg.env, device)
    runner = OnPolicyRunner(env, cfg, task=task, quiet=True)
    runner.start()
    collect, learn = [], []
    for i in range(args.warmup + args.iterations):
        t0 = time.perf_counter()
        runner.alg.set_iteration(i)
        runner.collect()
        _sync(device)
        t1 = time.perf_counter()
        runner.alg.update()
        _sync(device)
        if i >= args.warmup:
            collect.append(t1 - t0)
            learn.append(time.perf_counter() - t1)
    c, lrn = statistics.median(collect), statistics.median(learn)
    physics = _physics_rate(env, cfg.runner.num_steps_per_env)
    env.close()
    samples = cfg.batch_size / (c + lrn)
    return {"task": task, "num_envs": num_envs, "device": str(device), "samples_per_s": samples,
            "collection_s": c, "learning_s": lrn, "physics_samples_per_s": physics,
            "end_to_end_over_physics": samples / physics}


def runnable_tasks() -> list[str]:
    """Every built-in MuJoCo task that trains without a teacher."""
    from configs.catalog import registered
    from envs.registry import is_file_task

    out = []
    for name, spec in registered().items():
        cfg = spec.default_config()
        if not is_file_task(name) and hasattr(cfg.env, "physics_threads") and cfg.algorithm.name != "distillation":
            out.append(name)
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    rows = []
    print("| task | envs | samples/s | collect s | learn s | physics samples/s | end-to-end / physics |\n"
          "|---|---|---|---|---|---|---|", flush=True)
    for task in args.task or runnable_tasks():
        for n in args.num_envs:
            r = measure(task, n, args)
            rows.append(r)
            print(f"| {task} | {n} | {r['samples_per_s']:,.0f} | {r['collection_s']:.3f} | {r['learning_s']:.3f} | "
                  f"{r['physics_samples_per_s']:,.0f} | {r['end_to_end_over_physics']:.2f} |", flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
