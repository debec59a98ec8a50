"""Where a task's training time goes, per control step: physics, task logic, policy, learning; and the physics' size.

    python -m bench.profile --task quadruped-flat [--num-envs N] [--iterations K] [--warmup W] [--verbose]
        [--json FILE] [KEY=VALUE ...]
    MENAGERIE_ROOT=DIR python -m bench.profile --task menagerie:unitree_go2

Runs ``--warmup`` then ``--iterations`` PPO iterations of the task as train.py builds it (its defaults, the
overrides given) and times, with ``time.perf_counter`` around the existing calls (wrappers set on the objects by
this bench, nothing in the env's code), per control step of all envs:

- physics: the backend's ``step`` (``decimation`` MuJoCo substeps of every world);
- task logic: the rest of ``env.step`` (actions to targets, observations, rewards, terminations, resets);
- policy inference: the algorithm's ``act``;
- rollout bookkeeping: the rest of the collection (storage, episode statistics, returns / GAE);
- learning: the PPO update of the iteration, spread over its control steps;

and the measured total (wall clock of the iterations), against which the parts' sum is checked. The physics'
size: active contacts and constraint rows (``mjData.ncon`` / ``nefc`` of every world after each step, native
backend), the solver's settings and the collision pairs the broad phase checks (``bench/collision_pairs.py``),
with those a task could skip. When there are skippable pairs it times the raw physics of the model as is against a
bench-only copy without them (``collision_pairs.without_skippable``), from the same states and controls.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.collision_pairs import SKIPPABLE, checked_pairs, count_by_kind, without_skippable
from bench.profile_report import print_report
from bench.timing import sync

PARTS = ("physics", "task_logic", "policy_inference", "rollout_bookkeeping", "learning")
"""The split of a control step's time, in the table's order."""
SIZE_FIELDS = ("ncon", "nefc", "ne", "nf", "nl")
"""The MjData counts read after each physics step: contacts, constraint rows, and of those the equality, joint
friction (``frictionloss``) and limit rows (the rest are the contacts')."""


@dataclasses.dataclass
class Clock:
    """Seconds spent in one wrapped call, and how often it ran."""

    seconds: float = 0.0
    """Accumulated wall time."""
    calls: int = 0
    """Number of calls."""


def _wrap(obj: Any, name: str, clock: Clock, device: torch.device, after: Callable[[], None] | None = None) -> None:
    """Replace ``obj.name`` by a timed call of itself (an instance attribute: the class is untouched); ``after``
    runs outside the timed span."""
    inner = getattr(obj, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        sync(device)
        t = time.perf_counter()
        out = inner(*args, **kwargs)
        sync(device)
        clock.seconds += time.perf_counter() - t
        clock.calls += 1
        if after is not None:
            after()
        return out

    setattr(obj, name, timed)


class ContactSampler:
    """``mjData.ncon``, ``nefc`` and its equality / friction / limit rows (``ne``, ``nf``, ``nl``) of every world
    after each physics step (native backend), and with ``probe`` on
    the geom pairs in contact in the first ``sample`` worlds. Its own time is kept apart (``seconds``)."""

    def __init__(self, physics: Any, sample: int):
        batch = physics.batch
        self.fields = {name: batch.bind(name) for name in SIZE_FIELDS}
        self.batch, self.sample = batch, min(sample, physics.num_envs)
        self.counts: list[list[float]] = []
        self.touched: set[tuple[int, int]] = set()
        self.probe = False
        self.seconds = 0.0

    def __call__(self) -> None:
        t = time.perf_counter()
        self.counts.append([float(a.mean()) for a in self.fields.values()])
        if self.probe:
            import mujoco

            for sim in range(self.sample):
                d = self.batch.get_data(sim)
                mujoco.mj_forward(self.batch.get_model(sim), d)
                self.touched.update((int(min(c.geom)), int(max(c.geom))) for c in d.contact)
        self.seconds += time.perf_counter() - t

    def means(self) -> dict[str, float | None]:
        """Each of ``SIZE_FIELDS`` averaged over every world and step (None: no step was sampled)."""
        a = np.array(self.counts).reshape(-1, len(SIZE_FIELDS))
        return {name: float(a[:, k].mean()) if len(a) else None for k, name in enumerate(SIZE_FIELDS)}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat", help="a task name, menagerie:NAME or a robot file task")
    p.add_argument("--num-envs", type=int, default=None, help="envs (default: the task's)")
    p.add_argument("--iterations", type=int, default=3, help="timed PPO iterations")
    p.add_argument("--warmup", type=int, default=1, help="untimed iterations first (allocator, first resets)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--skip-steps", type=int, default=20,
                   help="control steps per timing of the skip experiment (0: no experiment)")
    p.add_argument("--skip-repeats", type=int, default=5, help="alternating timing pairs of the skip experiment")
    p.add_argument("--verbose", action="store_true", help="list every checked collision pair by class")
    p.add_argument("--json", type=Path, default=None, help="also write the profile to this file")
    p.add_argument("overrides", nargs="*", help="config overrides as for train.py, e.g. env.collisions=feet")
    args = p.parse_args(argv)
    from contract.errors import UserError

    for field, value, low in (("--iterations", args.iterations, 1), ("--warmup", args.warmup, 0),
                              ("--num-envs", args.num_envs or 1, 1), ("--skip-steps", args.skip_steps, 0),
                              ("--skip-repeats", args.skip_repeats, 1)):
        if value < low:
            raise UserError(f"{field} {value}: must be an integer >= {low}")
    return args


def build_runner(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The task's env, config and runner as train.py builds them (``args``: ``task``, ``num_envs``, ``device``,
    ``overrides``; also bench.end_to_end's)."""
    from configs.catalog import get_task
    from rl_core.config_io import apply_overrides, parse_override
    from rl_core.runner import OnPolicyRunner

    spec = get_task(args.task)
    cfg = apply_overrides(spec.default_config(), dict(parse_override(o) for o in args.overrides))
    env_cfg = dataclasses.replace(cfg.env, num_envs=args.num_envs) if args.num_envs else cfg.env
    cfg = dataclasses.replace(cfg, env=env_cfg, runner=dataclasses.replace(cfg.runner, device=args.device))
    env = spec.make_env(cfg.env, torch.device(args.device))
    runner = OnPolicyRunner(env, cfg, task=args.task, quiet=True)
    return env, cfg, runner


def _native(env: Any) -> bool:
    from envs.physics.native import NativePhysics

    return isinstance(getattr(env, "physics", None), NativePhysics)


def _timed_iterations(args: argparse.Namespace, env: Any, runner: Any, sampler: ContactSampler | None
                      ) -> dict[str, float]:
    """Run the iterations with the calls wrapped; returns the seconds of each part and the measured total."""
    device = torch.device(args.device)
    clocks = {name: Clock() for name in ("physics", "env", "act")}
    physics = getattr(env, "physics", None)
    if physics is not None:
        _wrap(physics, "step", clocks["physics"], device, after=sampler)
    _wrap(env, "step", clocks["env"], device)
    _wrap(runner.alg, "act", clocks["act"], device)
    runner.start()
    collect = learn = 0.0
    t_start = time.perf_counter()
    for i in range(args.warmup + args.iterations):
        if i == args.warmup:
            for c in clocks.values():
                c.seconds, c.calls = 0.0, 0
            if sampler is not None:
                sampler.counts.clear()
                sampler.seconds = 0.0
            collect = learn = 0.0
            t_start = time.perf_counter()
        t0 = time.perf_counter()
        runner.alg.set_iteration(i)
        runner.collect()
        sync(device)
        t1 = time.perf_counter()
        runner.alg.update()
        sync(device)
        collect, learn = collect + t1 - t0, learn + time.perf_counter() - t1
    probe_s = sampler.seconds if sampler is not None else 0.0
    total = time.perf_counter() - t_start - probe_s
    env_s = clocks["env"].seconds - probe_s
    return {"physics": clocks["physics"].seconds, "task_logic": env_s - clocks["physics"].seconds,
            "policy_inference": clocks["act"].seconds,
            "rollout_bookkeeping": collect - clocks["env"].seconds - clocks["act"].seconds,  # probe_s in both
            "learning": learn, "total": total, "control_steps": clocks["env"].calls}


def _probe_touched(runner: Any, sampler: ContactSampler) -> None:
    """One more (untimed) rollout of the policy, reading the contacts' geom pairs of the sampled worlds."""
    sampler.probe = True
    runner.collect()
    sampler.probe = False


def skip_experiment(env: Any, steps: int, repeats: int) -> dict[str, float]:
    """Raw physics of the task's model against ``without_skippable`` of it (bench only), each from the env's
    current states and controls: ``repeats`` pairs of timings of ``steps`` control steps, the two models taking
    turns (on a busy machine a pair sees the same load); medians, and the median of the per-pair ratios."""
    from envs.physics.native import NativePhysics

    state = env.physics.state_dict()
    ctrl = state["ctrl"].clone()
    models = {"as_is": env.model, "skipped": without_skippable(env.model)}
    times: dict[str, list[float]] = {k: [] for k in models}
    contacts: dict[str, float] = {}
    sims = {k: NativePhysics(m, env.num_envs, env.physics.nsubsteps, nthread=env.cfg.physics_threads)
            for k, m in models.items()}
    for _ in range(repeats):
        for k, p in sims.items():
            p.load_state_dict(state)
            ncon = p.batch.bind("ncon")
            t = time.perf_counter()
            for _ in range(steps):
                p.step(ctrl)
            times[k].append((time.perf_counter() - t) / steps)
            contacts[k] = float(ncon.mean())
    ratios = [b / a for a, b in zip(times["as_is"], times["skipped"], strict=True)]
    return {"as_is_ms": 1e3 * float(np.median(times["as_is"])), "skipped_ms": 1e3 * float(np.median(times["skipped"])),
            "ratio": float(np.median(ratios)), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "contacts_as_is": contacts["as_is"], "contacts_skipped": contacts["skipped"], "steps": steps,
            "repeats": repeats}


def physics_size(env: Any, sampler: ContactSampler | None) -> dict[str, Any]:
    """The model's size and solver settings, and the mean contacts / constraint rows of the rollout."""
    import mujoco

    m = env.model
    size = sampler.means() if sampler is not None else dict.fromkeys(SIZE_FIELDS)
    return {"substeps": int(env.cfg.decimation), "timestep": float(m.opt.timestep),
            "solver": mujoco.mjtSolver(m.opt.solver).name.removeprefix("mjSOL_"),
            "cone": mujoco.mjtCone(m.opt.cone).name.removeprefix("mjCONE_"),
            "iterations": int(m.opt.iterations), "ls_iterations": int(m.opt.ls_iterations),
            "integrator": mujoco.mjtIntegrator(m.opt.integrator).name.removeprefix("mjINT_"),
            "nbody": int(m.nbody), "ngeom": int(m.ngeom), "nv": int(m.nv), "mean_contacts": size["ncon"],
            "mean_constraint_rows": size["nefc"], "mean_equality_rows": size["ne"],
            "mean_friction_rows": size["nf"], "mean_limit_rows": size["nl"]}


def _pairs_section(env: Any, sampler: ContactSampler | None) -> dict[str, Any]:
    """The checked pairs by class, each marked with whether it was in contact in the probe rollout."""
    pairs = checked_pairs(env.model)
    touched = sampler.touched if sampler is not None else set()
    listed = [dataclasses.asdict(p) | {"touched": p.ids in touched} for p in pairs]
    return {"counts": count_by_kind(pairs), "checked": len(pairs),
            "skippable": sum(p.kind in SKIPPABLE for p in pairs),
            "skippable_touched": sum(p.kind in SKIPPABLE and p.ids in touched for p in pairs),
            "probe_worlds": sampler.sample if sampler is not None else 0, "list": listed}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = _parse(argv)
    env, cfg, runner = build_runner(args)
    sampler = ContactSampler(env.physics, sample=16) if _native(env) else None
    seconds = _timed_iterations(args, env, runner, sampler)
    steps = max(int(seconds.pop("control_steps")), 1)
    per_step_ms = {k: 1e3 * v / steps for k, v in seconds.items()}
    result: dict[str, Any] = {
        "task": args.task, "device": args.device, "overrides": args.overrides, "num_envs": env.num_envs,
        "steps_per_env": runner.storage.T, "iterations": args.iterations, "warmup": args.warmup,
        "control_steps": steps, "ms_per_control_step": per_step_ms,
        "sum_of_parts_ms": sum(per_step_ms[k] for k in PARTS),
        "samples_per_s": env.num_envs * steps / seconds["total"], "load_average": os.getloadavg(),
        "physics": physics_size(env, sampler) if getattr(env, "physics", None) is not None else None}
    if sampler is not None:
        _probe_touched(runner, sampler)
    if getattr(env, "model", None) is not None:
        result["collision_pairs"] = _pairs_section(env, sampler)
        if _native(env) and args.skip_steps and result["collision_pairs"]["skippable"]:
            result["skip_experiment"] = skip_experiment(env, args.skip_steps, args.skip_repeats)
    env.close()
    print_report(result, verbose=args.verbose)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
