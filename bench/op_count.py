"""Per env step of every registered MuJoCo task: the torch ops and Warp launches, by phase, against a stored baseline.

    python -m bench.op_count                           # every registered MuJoCo task vs bench/op_count_baseline.json
    python -m bench.op_count --task quadruped-flat --ops  # one task, with the op names of each phase
    python -m bench.op_count --write-baseline          # store this checkout's counts as the baseline

Runs on the CPU, in about a minute (a few steps at a small batch; the first run of a model on Warp's CPU device
compiles its kernels, about 20 s, then cached). For each task the env is built with ``env.backend=warp`` (``native``
without MuJoCo Warp) and takes the fixed-shape path a GPU takes (``fixed_shapes``: no work skipped for an empty
mask); ``runner.collect()`` of the task's own runner is counted over ``--steps`` steps (``bench/op_counter.py``):

- ``graph``: the task logic after the physics, replayed as one CUDA graph per step on a GPU (each op one kernel
  node of a few microseconds);
- ``eager``: the env's act (actions to controls, the physics launch) and the runner around the env step (policy,
  storage, bookkeeping), launched op by op from Python on a GPU (each op several microseconds of the host);
- Warp launches per control step (the physics substeps, one Warp graph per step on a GPU; mujoco_warp's solver
  loop runs its iterations on the CPU where a GPU's conditional node may stop early);
- the PPO update's ops per minibatch (one CUDA graph per minibatch on a GPU unless the learner runs it eagerly:
  ``graphable``).

Counts are exact for a given code and batch (no timing): an added per-step cost shows on any machine. The bench is
self-contained so it can be copied into an older checkout to bisect (docs/backends.md, "Per-step op counts").
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from bench.op_counter import EAGER_PHASES, GRAPHED_PHASES, OpCounter, per_step, warp_launches

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "bench" / "op_count_baseline.json"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", action="append", help="a registered MuJoCo task (repeatable; default: all of them)")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--steps", type=int, default=4, help="env steps counted (one runner.collect of this length)")
    p.add_argument("--backend", default=None, help="physics backend (default: warp when installed, else native)")
    p.add_argument("--baseline", type=Path, default=BASELINE, help="stored counts to compare with")
    p.add_argument("--write-baseline", action="store_true",
                   help="write this run's counts to --baseline (with --task: those rows only)")
    p.add_argument("--json", type=Path, help="also write this run's counts to this file")
    p.add_argument("--ops", action="store_true", help="print the op names of each phase")
    p.add_argument("--check", action="store_true", help="exit 1 when a total rose above the baseline")
    return p.parse_args(argv)


def mujoco_tasks() -> list[str]:
    """Every built-in task with a batched MuJoCo env (its env config has ``physics_threads``; robot files and
    Menagerie robots loaded in this process left out)."""
    from configs.catalog import registered
    from envs.registry import is_file_task

    return [name for name, spec in registered().items()
            if not is_file_task(name) and not name.startswith("menagerie:")
            and hasattr(spec.default_config().env, "physics_threads")]


def _build(name: str, args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """(env, runner or None, train config) of ``name`` on the CPU at the bench's batch and rollout length."""
    from configs.catalog import get_task
    from rl_core.runner import OnPolicyRunner

    spec = get_task(name)
    cfg = spec.default_config()
    env_cfg = dataclasses.replace(cfg.env, num_envs=args.num_envs, backend=args.backend,  # type: ignore[call-arg]
                                  physics_threads=1)
    cfg = dataclasses.replace(cfg, env=env_cfg, runner=dataclasses.replace(
        cfg.runner, device="cpu", num_steps_per_env=args.steps))
    env: Any = spec.make_env(env_cfg, torch.device("cpu"))
    if hasattr(env, "fixed_shapes"):
        env.fixed_shapes = True  # the GPU's path: masked work at fixed shapes
    else:  # checkouts before the task base (envs/tasks/base.py)
        env._cpu = False
    try:
        runner = OnPolicyRunner(env, cfg, task=name, run_dir=None, quiet=True)
    except Exception as e:  # e.g. distillation without a teacher checkpoint: the env alone is counted
        print(f"  ({name}: no runner, the env step alone: {str(e).splitlines()[0][:100]})", file=sys.stderr)
        runner = None
    return env, runner, cfg


def _rollout(env: Any, runner: Any, steps: int) -> None:
    """One ``runner.collect()`` (``steps`` env steps), or ``steps`` env steps with random actions."""
    if runner is not None:
        runner.collect()
        return
    n = env.action_spec.n
    with torch.inference_mode():
        for _ in range(steps):
            env.step(torch.randn(env.num_envs, n))


def _learn_ops(runner: Any, cfg: Any) -> dict[str, Any]:
    """Ops of one PPO update per minibatch, and whether a GPU replays it as a CUDA graph."""
    alg = runner.alg
    params = inspect.signature(alg.update).parameters
    with OpCounter() as c:
        if not params:  # the algorithm owns its rollout (issue 36)
            alg.update()
        else:  # older checkouts (bisecting)
            alg.update(runner.storage, runner.generator) if len(params) > 1 else alg.update(runner.storage)
    minibatches = cfg.algorithm.num_learning_epochs * cfg.algorithm.num_mini_batches
    graphable = getattr(alg, "graph_capturable",  # before it: recurrent and symmetric updates ran eagerly
                        getattr(alg, "_mirror_obs", None) is None and not getattr(runner.policy, "is_recurrent", False))
    return {"ops_per_minibatch": round(sum(c.counts.values()) / minibatches, 2), "graphable": graphable}


def count_task(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The counts of one task (see the module docstring)."""
    env, runner, cfg = _build(name, args)
    if runner is not None and hasattr(runner, "start"):
        runner.start()
    elif runner is not None:  # older checkouts (bisecting)
        runner.obs = runner._to_device(env.reset(seed=0))
    else:
        env.reset(seed=0)
    _rollout(env, runner, args.steps)  # warm-up: kernels, lazy initializations
    with OpCounter() as c:
        _rollout(env, runner, args.steps)
    phases = per_step(c.counts, args.steps)
    out: dict[str, Any] = {
        "phases": phases, "syncs": per_step(c.syncs, args.steps),
        "graph": round(sum(v for k, v in phases.items() if k in GRAPHED_PHASES), 2),
        "eager": round(sum(v for k, v in phases.items() if k in EAGER_PHASES), 2),
        "ops": {f"{p}: {op}": round(n / args.steps, 2) for (p, op), n in sorted(c.names.items())}}
    physics = env.physics
    if hasattr(physics, "_mjw"):  # MuJoCo Warp: one substep eagerly, launches counted, times the substeps
        with warp_launches() as w:
            physics._mjw.step(physics.m, physics.d)
        substeps = env.cfg.decimation
        out["warp"] = sum(w.values()) * substeps
        out["warp_by_file"] = {k: v * substeps for k, v in sorted(w.items())}
    if runner is not None and runner.storage is not None and hasattr(runner.alg, "cfg"):
        out["learn"] = _learn_ops(runner, cfg)
    env.close()
    return out


def _change(now: float | None, base: float | None) -> str:
    if now is None or base is None or now == base:
        return ""
    return f"{now - base:+g}"


def _rows(now: dict[str, Any], base: dict[str, Any]) -> list[tuple[str, str, Any, Any]]:
    """(what, where on a GPU, now, baseline) rows of one task's table."""
    rows: list[tuple[str, str, Any, Any]] = []
    np_, bp = now.get("phases", {}), base.get("phases", {})
    for where, phases in (("graph", GRAPHED_PHASES), ("eager", EAGER_PHASES)):
        rows += [(p, where, np_.get(p), bp.get(p)) for p in phases if p in np_ or p in bp]
        rows.append((f"**{where} ops / step**", where, now.get(where), base.get(where)))
    rows.append(("host syncs / step", "", sum(now.get("syncs", {}).values()), sum(base.get("syncs", {}).values())
                 if base else None))
    if "warp" in now or "warp" in base:
        rows.append(("Warp launches / control step", "Warp graph", now.get("warp"), base.get("warp")))
    learn_now, learn_base = now.get("learn", {}), base.get("learn", {})
    if learn_now or learn_base:
        where = "graph" if learn_now.get("graphable", learn_base.get("graphable")) else "eager"
        rows.append(("PPO update ops / minibatch", where, learn_now.get("ops_per_minibatch"),
                     learn_base.get("ops_per_minibatch")))
    return rows


def print_table(name: str, now: dict[str, Any], base: dict[str, Any], ops: bool) -> None:
    print(f"\n{name}\n\n| per step | on a GPU | now | baseline | change |\n|---|---|---|---|---|")
    for what, where, n, b in _rows(now, base):
        print(f"| {what} | {where} | {'' if n is None else n} | {'' if b is None else b} | {_change(n, b)} |")
    if ops:
        for key, n in now.get("ops", {}).items():
            b = base.get("ops", {}).get(key)
            print(f"    {key}: {n}{'' if b in (None, n) else f' (baseline {b})'}")


def _meta(args: argparse.Namespace) -> dict[str, Any]:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return {"commit": commit, "num_envs": args.num_envs, "steps": args.steps, "backend": args.backend,
            "torch": torch.__version__}


def _risen(now: dict[str, Any], base: dict[str, Any]) -> list[str]:
    keys = ("graph", "eager", "warp")
    return [k for k in keys if k in now and k in base and now[k] > base[k]]


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.backend is None:
        from importlib.util import find_spec

        args.backend = "warp" if find_spec("mujoco_warp") is not None else "native"
    tasks = args.task or mujoco_tasks()
    stored = json.loads(args.baseline.read_text()) if args.baseline.is_file() else {}
    base_tasks = stored.get("tasks", {})
    meta = _meta(args)
    print(f"op counts per env step: backend {args.backend}, {args.num_envs} envs, {args.steps} steps, commit "
          f"{meta['commit']}; baseline: {stored.get('meta', 'none')}")
    results, risen = {}, []
    for name in tasks:
        results[name] = count_task(name, args)
        print_table(name, results[name], base_tasks.get(name, {}), args.ops)
        risen += [f"{name} {k}" for k in _risen(results[name], base_tasks.get(name, {}))]
    print(f"\nrose above the baseline: {', '.join(risen) if risen else 'nothing'}")
    record = {"meta": meta, "tasks": results}
    if args.json:
        args.json.write_text(json.dumps(record, indent=1) + "\n")
    if args.write_baseline:
        kept = {k: {f: v for f, v in r.items() if f != "ops"} for k, r in results.items()}
        if args.task:  # rows of the named tasks only: the others keep theirs, the meta says whose is whose
            kept = {**base_tasks, **kept}
            added = {**stored.get("meta", {}).get("rows_from", {}), **{t: meta["commit"] for t in args.task}}
            meta = {**stored.get("meta", meta), "rows_from": added}
        args.baseline.write_text(json.dumps({"meta": meta, "tasks": kept}, indent=1) + "\n")
        print(f"baseline written: {args.baseline}")
    return 1 if args.check and risen else 0


if __name__ == "__main__":
    sys.exit(main())
