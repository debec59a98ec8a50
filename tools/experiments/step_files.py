"""The project files one control step of a task runs through, in the order they are first entered.

    python -m tools.experiments.step_files [--task quadruped-flat] [--num-envs 16]

A runner is built for the task (native MuJoCo on the CPU) with rollouts of one step; after one warm-up iteration
the next rollout (``runner.collect()``: the policy's act, the env's step with the task's recipe, parts, job
modules and physics backend, the algorithm's record, the episode bookkeeping and the end of the rollout) is traced
with ``sys.setprofile``. Prints each file with the number of times the step entered it from another file, the
count, and how often the step entered the task family's env module (docs/design.md quotes both; a family's step
runs its parts, ``envs/tasks/parts.py``, not hooks of its env). The script runs on older checkouts too
(``PYTHONPATH=/old/checkout``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(str(__import__("rl_core").__file__)).resolve().parents[1]
"""The checkout traced (the one ``rl_core`` is imported from)."""


def trace_step(task: str, num_envs: int) -> tuple[dict[str, int], str]:
    """Project file (relative path) -> how often one rollout step entered it from another file; and the relative
    path of the family's env module (the module of the env's class)."""
    import torch

    from configs.catalog import get_task
    from rl_core.runner import OnPolicyRunner

    spec = get_task(task)
    cfg = spec.default_config()
    env_cfg: Any = cfg.env  # a MuJoCo task's config
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(env_cfg, num_envs=num_envs, backend="native"),
                              runner=dataclasses.replace(cfg.runner, num_steps_per_env=1))
    env = spec.make_env(cfg.env, torch.device("cpu"))
    runner = OnPolicyRunner(env, cfg, task=task, quiet=True)
    runner.learn(num_iterations=1)  # warm-up: every lazy set-up done
    entered: dict[str, int] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        path = Path(frame.f_code.co_filename)
        if ROOT not in path.parents or ".venv" in path.parts:
            return
        caller = frame.f_back.f_code.co_filename if frame.f_back is not None else ""
        if caller != frame.f_code.co_filename:
            rel = path.relative_to(ROOT).as_posix()
            entered[rel] = entered.get(rel, 0) + 1

    sys.setprofile(profile)
    try:
        runner.collect()  # one rollout step and the end of the rollout (GAE)
    finally:
        sys.setprofile(None)
    env_file = Path(str(sys.modules[type(env).__module__].__file__)).resolve().relative_to(ROOT).as_posix()
    return entered, env_file


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--num-envs", type=int, default=16)
    args = p.parse_args()
    entered, env_file = trace_step(args.task, args.num_envs)
    for rel, n in entered.items():
        print(f"{n:4d}  {rel}")
    print(f"{len(entered)} files")
    print(f"{env_file} entered {entered.get(env_file, 0)} times")


if __name__ == "__main__":
    main()
