"""Where a MuJoCo Warp start-up spends its time before the first step, stage by stage, in fresh processes.

    python -m bench.warp_startup                                  # Warp's CPU device, quadruped-flat
    python -m bench.warp_startup --device cuda --task quadruped-rough
    python -m bench.warp_startup --empty-cache                    # each mode from an empty kernel cache of its own

Each load mode runs in its own process (nothing imported or loaded before): ``serial`` (the CPU device's way: the
big mujoco_warp modules preloaded in parallel, the model's generated ones loaded one by one inside the first step)
and ``parallel`` (the CUDA way: a dry run of the step finds every module variant, loaded by 8 threads before it;
``envs/physics/warp_variants.py``). Stages: importing torch, Warp + mujoco_warp, and ``torch._dynamo`` (which
``torch.optim.Adam`` imports on construction); building the model; preloading; ``put_model`` + ``make_data``; the dry
run and the parallel load; the first step (eager ``mujoco_warp.step``: kernels load, then it runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _stages(task: str, device: str, mode: str) -> dict[str, float]:
    """Seconds per stage of one start-up in this process."""
    out: dict[str, float] = {}
    t = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        out[name] = round(now - t, 3)
        t = now

    import torch
    lap("import torch")
    from envs.physics.warp_setup import import_warp, preload_kernels
    wp, mjw = import_warp()
    lap("import warp + mujoco_warp")
    import torch._dynamo  # noqa: F401  (what Adam's constructor imports)
    lap("import torch._dynamo")
    import dataclasses

    from configs.catalog import get_task
    spec = get_task(task)
    cfg: Any = spec.default_config().env
    env = spec.make_env(dataclasses.replace(cfg, num_envs=64, backend="native"), torch.device("cpu"))
    model = env.model  # type: ignore[attr-defined]
    lap("model (a native env of the task: MjSpec assembly, compile)")
    dev = wp.get_device(device)
    if mode == "serial":
        preload_kernels(wp, dev)
        lap("preload 8 mujoco_warp modules")
    with wp.ScopedDevice(dev):
        m, d = mjw.put_model(model), mjw.make_data(model, nworld=64)
    wp.synchronize_device(dev)
    lap("put_model + make_data")
    if mode == "parallel":
        from envs.physics.warp_variants import load_parallel, predict_for_device
        with wp.ScopedDevice(dev):
            variants = predict_for_device(wp, mjw, m, mjw.make_data(model, nworld=1), dev)
        lap(f"dry run ({len(variants)} variants)")
        load_parallel(wp, variants, dev, workers=min(8, os.cpu_count() or 1))
        lap("parallel load")
    with wp.ScopedDevice(dev):
        mjw.step(m, d)
    wp.synchronize_device(dev)
    lap("first step (loads, then runs)")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--device", default="cpu", help="Warp device: cpu or cuda:0")
    p.add_argument("--modes", nargs="+", default=["serial", "parallel"], choices=["serial", "parallel"])
    p.add_argument("--empty-cache", action="store_true", help="each mode compiles into an empty cache of its own")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(_stages(args.task, args.device, args.child)))
        return 0
    runs = {}
    for mode in args.modes:
        env = dict(os.environ)
        if args.empty_cache:
            env["LEGGED_MJX_WARP_CACHE"] = tempfile.mkdtemp(prefix=f"warp_startup_{mode}_")
        try:
            r = subprocess.run([sys.executable, "-m", "bench.warp_startup", "--task", args.task, "--device",
                                args.device, "--child", mode], cwd=ROOT, capture_output=True, text=True, timeout=900,
                               env=env)
        finally:
            if args.empty_cache:
                shutil.rmtree(env["LEGGED_MJX_WARP_CACHE"], ignore_errors=True)
        if r.returncode != 0:
            print(r.stderr[-2000:], file=sys.stderr)
            return 1
        runs[mode] = json.loads(r.stdout.strip().splitlines()[-1])
    order = ["import", "model", "preload", "put_model", "dry run", "parallel", "first step"]
    stages = sorted(dict.fromkeys(s for run in runs.values() for s in run),
                    key=lambda s: next(i for i, o in enumerate(order) if s.startswith(o)))
    cache = "an empty one per mode" if args.empty_cache else os.environ.get("LEGGED_MJX_WARP_CACHE", "the default")
    print(f"{args.task} on {args.device}, kernel cache: {cache}\n")
    print("| stage | " + " | ".join(f"{m} s" for m in runs) + " |\n|---|" + "---|" * len(runs))
    for s in stages:
        print(f"| {s} | " + " | ".join(f"{run[s]:.2f}" if s in run else "" for run in runs.values()) + " |")
    print("| **total** | " + " | ".join(f"{sum(run.values()):.2f}" for run in runs.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
