"""How many worlds of a locomotion task move at speeds no robot reaches, under random actions (no training).

Steps ``--num-envs`` worlds of a task's default env with standard-normal actions (what the initial policy sends)
for ``--steps`` control steps (optionally with a push every ``--push-s`` seconds) and reports, per step, how many
worlds have any joint or base speed above each threshold, the largest speeds seen (base linear m/s, base angular
rad/s, joints rad/s), the largest policy-observation magnitude, the worlds the task marked invalid, and the
robot-derived bounds of ``envs/tasks/bounds.py``. On MuJoCo Warp also the buffer use per world (the most contacts
and constraint rows any world had, against ``nconmax`` / ``njmax``) and how many world-steps raised each overflow
flag. docs/backends.md quotes it:

    python -m tools.experiments.speed_census --task quadruped-rough --backend native --num-envs 1024 --steps 150
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from typing import Any

import torch


def _parse(argv: list[str] | None) -> argparse.Namespace:
    from envs.physics.registry import BACKENDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="quadruped-rough")
    parser.add_argument("--backend", default="native", choices=BACKENDS)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--push-s", type=float, default=None, help="push interval (s); default: the task's")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[30.0, 100.0])
    parser.add_argument("--solver-iterations", type=int, default=None,
                        help="env.solver_iterations (default: the model's)")
    parser.add_argument("--ls-iterations", type=int, default=None, help="env.ls_iterations (default: the model's)")
    parser.add_argument("--json", default=None, help="also write the result here")
    return parser.parse_args(argv)


def _make_env(args: argparse.Namespace) -> Any:
    """The task's default env with the census' changes."""
    from configs.catalog import get_task

    spec = get_task(args.task)
    env_cfg = spec.default_config().env
    changes: dict = {"num_envs": args.num_envs, "backend": args.backend, "solver_iterations": args.solver_iterations,
                     "ls_iterations": args.ls_iterations, "cuda_graph": False}  # read each step's state eagerly
    if args.push_s is not None:
        changes["randomization"] = dataclasses.replace(env_cfg.randomization,  # type: ignore[attr-defined]
                                                       push_interval_s=args.push_s)
    return spec.make_env(dataclasses.replace(env_cfg, **changes), torch.device(args.device))


class _Census:
    """Worlds above each speed threshold per step, peak speeds and observation magnitude, invalid transitions."""

    def __init__(self, env: Any, thresholds: list[float], obs: dict[str, torch.Tensor]) -> None:
        rb = env.robot
        self.base, self.joints = rb.base_dof_adr, list(rb.joint_dof_adr)
        self.above: dict[float, list[int]] = {t: [] for t in thresholds}
        self.peak = {"base_lin": 0.0, "base_ang": 0.0, "joint": 0.0, "obs": float(obs["policy"].abs().max())}
        self.invalid = 0

    def add(self, qvel: torch.Tensor, obs: dict[str, torch.Tensor], info: dict[str, Any]) -> None:
        """One step: ``qvel`` the speeds reached, before the task reset any world."""
        q, base = torch.nan_to_num(qvel, nan=float("inf")), self.base
        lin = q[:, base:base + 3].norm(dim=1)
        ang = q[:, base + 3:base + 6].norm(dim=1)
        jv = q[:, self.joints].abs().amax(dim=1)
        fastest = torch.stack([lin, ang, jv], 1).amax(1)
        for t, counts in self.above.items():
            counts.append(int((fastest > t).sum()))
        finite = torch.isfinite(fastest)
        for key, v in (("base_lin", lin), ("base_ang", ang), ("joint", jv)):
            if finite.any():
                self.peak[key] = max(self.peak[key], float(v[finite].max()))
        self.peak["obs"] = max(self.peak["obs"], float(obs["policy"].abs().max()))
        self.invalid += int(info["invalid"].sum()) if "invalid" in info else 0

    def result(self) -> dict[str, Any]:
        return {"worlds_above": {str(t): {"max_per_step": max(v), "steps_with_any": sum(1 for x in v if x),
                                          "world_steps": sum(v)} for t, v in self.above.items()},
                "peak": {k: round(v, 3) for k, v in self.peak.items()}, "invalid_transitions": self.invalid}


def _recorded_reads(physics: Any) -> list:
    """Every readout of a step, in order (the first is the state the step reached, before any reset); eager task
    logic only (not a CUDA graph)."""
    reads: list = []
    read = physics.read

    def recording_read():
        reads.append(read())
        return reads[-1]

    physics.read = recording_read
    return reads


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    t0 = time.perf_counter()
    env = _make_env(args)
    obs = env.reset(seed=args.seed)
    build_s = time.perf_counter() - t0
    g = torch.Generator(env.device).manual_seed(args.seed)
    census = _Census(env, args.thresholds, obs)
    reads = _recorded_reads(env.physics)
    warp = _WarpBuffers(env.physics) if args.backend == "warp" else None
    t0 = time.perf_counter()
    for _ in range(args.steps):
        a = torch.randn(env.num_envs, env.action_spec.n, generator=g, device=env.device)
        reads.clear()
        obs, _, _, _, info = env.step(a)
        if warp is not None:
            warp.record()
        census.add(reads[0].qvel, obs, info)
    run_s = time.perf_counter() - t0
    bounds = getattr(env, "bounds", None)
    out = {
        "task": args.task, "backend": args.backend, "device": str(env.device), "num_envs": env.num_envs,
        "solver_iterations": args.solver_iterations, "ls_iterations": args.ls_iterations,
        "steps": args.steps, "seed": args.seed, "push_s": args.push_s, **census.result(),
        "bounds": dataclasses.asdict(bounds) if bounds is not None else None,
        "build_s": round(build_s, 1), "run_s": round(run_s, 1),
    }
    if warp is not None:
        out["warp"] = warp.result()
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


class _WarpBuffers:
    """Per-world contact and constraint-row counts and overflow flags of a WarpPhysics after each step (the state
    after the last substep: contacts of that substep)."""

    def __init__(self, physics) -> None:
        import warp as wp

        from envs.physics.warp_setup import import_warp

        _, self.mjw = import_warp()
        d = physics.d
        self.physics, self.t = physics, wp.to_torch
        self.nworld = physics.num_envs
        self.nconmax = int(d.naconmax) // self.nworld if hasattr(d, "naconmax") else None
        self.njmax = int(d.njmax)
        self.max_contacts = 0
        self.max_rows = 0
        self.flags: dict[str, int] = {}

    def record(self) -> None:
        d, t = self.physics.d, self.t
        nacon = int(t(d.nacon)[0])
        worlds = t(d.contact.worldid)[:nacon].long()
        if nacon:
            self.max_contacts = max(self.max_contacts, int(torch.bincount(worlds, minlength=self.nworld).max()))
        self.max_rows = max(self.max_rows, int(t(d.nefc).max()))
        overflow = self.physics._overflow
        for flag in self.mjw.OverflowType:
            if flag.value and flag.name not in ("ALL",) and bin(flag.value).count("1") == 1:
                n = int(((overflow & int(flag.value)) != 0).sum())
                if n:
                    self.flags[flag.name] = self.flags.get(flag.name, 0) + n

    def result(self) -> dict:
        return {"nconmax": self.nconmax, "njmax": self.njmax, "max_contacts_per_world": self.max_contacts,
                "max_constraint_rows_per_world": self.max_rows, "overflow_world_steps": self.flags}


if __name__ == "__main__":
    main()
