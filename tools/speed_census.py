"""How many worlds of a locomotion task move at speeds no robot reaches, under random actions (no training).

Steps ``--num-envs`` worlds of a task's default env with standard-normal actions (what the initial policy sends)
for ``--steps`` control steps (optionally with a push every ``--push-s`` seconds) and reports, per step, how many
worlds have any joint or base speed above each threshold, the largest speeds seen (base linear m/s, base angular
rad/s, joints rad/s), the largest policy-observation magnitude, the worlds the task marked invalid, and the
robot-derived bounds of ``envs/tasks/bounds.py``. On MuJoCo Warp also the buffer use per world (the most contacts
and constraint rows any world had, against ``nconmax`` / ``njmax``) and how many world-steps raised each overflow
flag. docs/backends.md quotes it:

    python -m tools.speed_census --task quadruped-rough --backend native --num-envs 1024 --steps 150
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="quadruped-rough")
    parser.add_argument("--backend", default="native", choices=["native", "mjx", "warp"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--push-s", type=float, default=None, help="push interval (s); default: the task's")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[30.0, 100.0])
    parser.add_argument("--solver-iterations", type=int, default=None, help="env.solver_iterations (default: the model's)")
    parser.add_argument("--ls-iterations", type=int, default=None, help="env.ls_iterations (default: the model's)")
    parser.add_argument("--json", default=None, help="also write the result here")
    args = parser.parse_args()

    from configs.catalog import get_task

    spec = get_task(args.task)
    env_cfg = spec.default_config().env
    changes: dict = {"num_envs": args.num_envs, "backend": args.backend, "solver_iterations": args.solver_iterations,
                     "ls_iterations": args.ls_iterations, "cuda_graph": False}  # read each step's state eagerly
    if args.push_s is not None:
        changes["randomization"] = dataclasses.replace(env_cfg.randomization, push_interval_s=args.push_s)  # type: ignore[attr-defined]
    env_cfg = dataclasses.replace(env_cfg, **changes)
    t0 = time.perf_counter()
    env = spec.make_env(env_cfg, torch.device(args.device))
    obs = env.reset(seed=args.seed)
    build_s = time.perf_counter() - t0
    rb = env.robot  # type: ignore[attr-defined]
    base = rb.base_dof_adr
    joints = list(rb.joint_dof_adr)
    g = torch.Generator(env.device).manual_seed(args.seed)
    above: dict[float, list[int]] = {t: [] for t in args.thresholds}
    peak = {"base_lin": 0.0, "base_ang": 0.0, "joint": 0.0, "obs": float(obs["policy"].abs().max())}
    invalid = 0
    physics = env.physics  # type: ignore[attr-defined]
    reads: list = []  # every readout of a step: the first is the state the step reached, before any reset
    read = physics.read

    def recording_read():  # eager task logic only (not a CUDA graph)
        reads.append(read())
        return reads[-1]

    physics.read = recording_read
    warp = _WarpBuffers(physics) if args.backend == "warp" else None
    t0 = time.perf_counter()
    for _ in range(args.steps):
        a = torch.randn(env.num_envs, env.action_spec.n, generator=g, device=env.device)
        reads.clear()
        obs, _, _, _, info = env.step(a)
        if warp is not None:
            warp.record()
        q = torch.nan_to_num(reads[0].qvel, nan=float("inf"))  # the speeds reached, before the task reset any world
        lin = q[:, base:base + 3].norm(dim=1)
        ang = q[:, base + 3:base + 6].norm(dim=1)
        jv = q[:, joints].abs().amax(dim=1)
        fastest = torch.stack([lin, ang, jv], 1).amax(1)
        for t in args.thresholds:
            above[t].append(int((fastest > t).sum()))
        finite = torch.isfinite(fastest)
        for key, v in (("base_lin", lin), ("base_ang", ang), ("joint", jv)):
            if finite.any():
                peak[key] = max(peak[key], float(v[finite].max()))
        peak["obs"] = max(peak["obs"], float(obs["policy"].abs().max()))
        invalid += int(info["invalid"].sum()) if "invalid" in info else 0
    run_s = time.perf_counter() - t0
    bounds = getattr(env, "bounds", None)
    out = {
        "task": args.task, "backend": args.backend, "device": str(env.device), "num_envs": env.num_envs,
        "solver_iterations": args.solver_iterations, "ls_iterations": args.ls_iterations,
        "steps": args.steps, "seed": args.seed, "push_s": args.push_s,
        "worlds_above": {str(t): {"max_per_step": max(v), "steps_with_any": sum(1 for x in v if x),
                                  "world_steps": sum(v)} for t, v in above.items()},
        "peak": {k: round(v, 3) for k, v in peak.items()},
        "invalid_transitions": invalid,
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

        from envs.physics.warp import import_warp

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
