"""Where a quadruped-flat env step spends its time on a GPU: host dispatch vs device work vs idle device.

    python -m tools.experiments.gpu_step_profile [--num-envs 4096] [--steps 50] [--collisions feet] [--trace trace.json]

For raw physics (``physics.step``) and the full env step it reports, per control step:
- wall: the loop's time with one device sync at the end (what training sees);
- host: the loop's time before that sync (Python + launching; the device may still be busy);
- device busy (CUDA only): the sum of all kernel times that CUPTI records in the process, torch's and JAX's
  alike, and the number of kernels.
When host ~ wall and device busy << wall, the step is launch-bound (fewer, larger kernels help); when device busy
~ wall, the physics kernels themselves are the cost. ``--trace`` writes a Chrome trace of the profiled env
steps (open it in chrome://tracing or Perfetto). Without CUDA it runs on the CPU and skips the kernel summary.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=50, help="control steps per timed loop")
    p.add_argument("--device", default="cuda" if _cuda() else "cpu")
    p.add_argument("--collisions", default="full", choices=["full", "feet"])
    p.add_argument("--trace", type=Path, default=None, help="write a Chrome trace of the profiled env steps")
    args = p.parse_args(argv)

    import torch

    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion.config import LocomotionEnvConfig

    device = torch.device(args.device)
    cuda = device.type == "cuda"
    env = LocomotionEnv(LocomotionEnvConfig(num_envs=args.num_envs, collisions=args.collisions), QUADRUPED, device)
    env.reset(seed=0)
    n = args.num_envs
    actions = torch.zeros(n, 12, device=env.device)
    ctrl = env.default_joint_pos.expand(n, 12).contiguous()

    def wait() -> None:
        env.physics.read().qpos[0, 0].item()  # waits for JAX and torch work alike
        if cuda:
            torch.cuda.synchronize()

    loops = {"raw physics": lambda: env.physics.step(ctrl), "env step": lambda: env.step(actions)}
    print(f"quadruped-flat, backend {env.backend}, {device}, {n} envs, collisions {args.collisions}")
    print("| loop | wall ms/step | host ms/step | device busy ms/step | kernels/step |")
    print("|---|---|---|---|---|")
    for name, fn in loops.items():
        for _ in range(5):
            fn()
        wait()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            fn()
        t1 = time.perf_counter()
        wait()
        t2 = time.perf_counter()
        busy, kernels = _device_time(fn, args.steps, wait, args.trace if name == "env step" else None) if cuda \
            else (None, None)
        print(f"| {name} | {(t2 - t0) / args.steps * 1e3:.2f} | {(t1 - t0) / args.steps * 1e3:.2f} | "
              f"{'-' if busy is None else f'{busy:.2f}'} | {'-' if kernels is None else f'{kernels:.0f}'} |")
    env.close()
    return 0


def _cuda() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return torch.cuda.is_available()


def _device_time(fn, steps: int, wait, trace: Path | None) -> tuple[float, float]:
    """Kernel time (ms) and kernel count per step, from a CUDA profile of ``steps`` calls.

    Read from the Chrome trace rather than torch's event list: the trace holds every kernel CUPTI saw in the
    process, including JAX's, which have no torch op to hang from."""
    import json
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        wait()
    with tempfile.TemporaryDirectory() as tmp:
        path = trace or Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text()).get("traceEvents", [])
    kernels = [e for e in events if e.get("cat") == "kernel"]
    busy_us = sum(float(e.get("dur", 0.0)) for e in kernels)
    return busy_us / 1e3 / steps, len(kernels) / steps
