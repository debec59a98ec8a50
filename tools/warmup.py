"""Fill MuJoCo Warp's kernel cache for tasks ahead of training, so that a run's first step compiles nothing.

    python -m tools.warmup --task quadruped-flat                      # this machine's GPU (else Warp's CPU device)
    python -m tools.warmup --task quadruped-flat --task humanoid-flat --task quadruped-rough
    python -m tools.warmup --task path/to/my_robot.py:flat env.num_envs=8192
    python -m tools.warmup --task quadruped-flat --device cpu --arch 80,86,89,90  # + CUDA binaries, no GPU needed
    python -m tools.warmup --task quadruped-flat --arch 90 --cuda-only             # CUDA binaries alone

For each task it builds the env as ``train.py`` would on ``--device`` with ``env.backend=warp`` (the task's default
number of envs for that device, and any ``section.field=value`` overrides), resets it and takes one step: every kernel
module a training step uses is then compiled into Warp's cache (``LEGGED_MJX_WARP_CACHE``, default
``~/.cache/legged-mjx/warp``) and the start-up manifest is written. Nothing is trained, nothing is written outside
the cache. ``--arch`` also predicts every module variant a CUDA step of the model loads (mujoco_warp's block sizes
and CUDA-only branches, by a dry run of the step under a description of each architecture's common cards:
``envs/physics/warp_variants.py``) and compiles them for those architectures (PTX and CUBIN) with Warp's
ahead-of-time compiler, which works on a machine without a GPU; see docs/backends.md. Prints one line per task and
a JSON summary with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from contract.errors import OneLineParser, UserError, run_reporting_errors


def _arches(text: str) -> list[int]:
    try:
        return [int(a.strip().removeprefix("sm_")) for a in text.split(",") if a.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--arch {text!r}: CUDA architectures as comma-separated numbers, e.g. "
                                         "80,86,89,90") from None


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", action="append", required=True, help="task to warm up (repeatable): a registered name "
                   "or path/to/file.py:name")
    p.add_argument("--device", help="cuda, cuda:N or cpu (default: cuda when available, else cpu)")
    p.add_argument("--arch", type=_arches, default=[], help="also compile for these CUDA architectures ahead of "
                   "time, comma-separated, e.g. 80,86,89,90,100,120 (works without a GPU)")
    p.add_argument("--cuda-only", action="store_true", help="with --arch: only the CUDA variants, without a step on "
                   "this machine (no CPU compiler needed, e.g. a GPU image's cache)")
    p.add_argument("--json", type=Path, help="write a summary (per task: modules, compiled, seconds) to this file")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    p.add_argument("overrides", nargs="*", metavar="section.field=value", help="config overrides (env.num_envs=...)")
    return p


def _task_config(task: str, overrides: list[str], backend: str, device: str) -> tuple[Any, Any]:
    """(TaskSpec, TrainConfig) of ``task`` with ``backend`` on ``device`` and the overrides, checked."""
    from configs.catalog import get_task
    from rl_core.config_io import apply_overrides, parse_override

    spec = get_task(task)
    cfg = spec.default_config()
    values = dict(parse_override(text) for text in overrides)
    if not hasattr(cfg.env, "backend"):
        raise UserError(f"--task {task!r} is not a MuJoCo task with physics backends (nothing of Warp to warm up)")
    cfg = apply_overrides(cfg, {**values, "env.backend": backend, "runner.device": device})
    if spec.check_dependencies is not None:
        spec.check_dependencies()
    if spec.validate is not None:
        spec.validate(cfg.env)
    return spec, cfg


def warm_task(task: str, device: str, overrides: list[str], arches: list[int], cuda_only: bool = False
              ) -> dict[str, Any]:
    """Build ``task`` on Warp, take one step (compiles or loads every kernel), optionally compile for ``arches``.
    ``cuda_only``: no step; the model's CUDA variants for ``arches`` alone (no CPU compiler needed)."""
    import torch

    from envs.physics.warp import WarpPhysics
    from envs.physics.warp_variants import ahead_of_time

    spec, cfg = _task_config(task, overrides, "native" if cuda_only else "warp", "cpu" if cuda_only else device)
    t0 = time.perf_counter()
    env: Any = spec.make_env(cfg.env, torch.device("cpu" if cuda_only else device))
    ahead: dict[str, Any] = {}
    report = None
    try:
        if cuda_only:  # the native env gives the compiled model and its per-world fields
            ahead = ahead_of_time(env.model, arches, fields=tuple(getattr(env.physics, "_fields", {})))
        else:
            env.reset()
            env.step(torch.zeros(env.num_envs, env.action_spec.n, device=env.device))
            physics = getattr(env, "physics", None)
            if isinstance(physics, WarpPhysics):
                report = physics.kernels.report
                if arches:
                    ahead = ahead_of_time(env.model, arches, physics=physics)
    finally:
        env.close()
    result: dict[str, Any] = {"task": task, "device": "none (CUDA only)" if cuda_only else device,
                              "seconds": round(time.perf_counter() - t0, 2)}
    if report is not None:
        result.update(modules=report.modules, compiled=report.compiled, first_step_s=round(report.seconds, 2))
    return result | ahead


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)
    return run_reporting_errors(lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"--device {device!r} but no CUDA device is available; use --device cpu (with --arch for "
                        "CUDA binaries built without a GPU)")
    if args.cuda_only and not args.arch:
        raise UserError("--cuda-only builds CUDA variants: name the architectures with --arch, e.g. --arch 90")
    results = []
    for task in args.task:
        r = warm_task(task, device, args.overrides, args.arch, args.cuda_only)
        results.append(r)
        line = f"warmup {task} on {r['device']}: {r['seconds']:.1f} s"
        if "modules" in r:
            line += f", {r['modules']} modules ({r['compiled']} compiled)"
        if "aot_files" in r:
            line += f"; ahead of time for sm_{', sm_'.join(map(str, r['arches']))}: {r['cuda_variants']} module " \
                    f"variants, {r['aot_files']} files in " \
                    f"{r['aot_s']:.1f} s"
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
