"""Our side of bench/mjbatch_side_by_side.py: a task's training as train.py builds it, timed as the example's.

    python -m bench.mjbatch_ours --task quadruped-flat [--num-envs 1024] [--iterations 3] [--physics-steps 20]
        [--torch-threads N]

Builds the task with its defaults (``bench.profile.build_runner``: the runner, the algorithm, torch and physics
threads as train.py sets them), runs one warm-up iteration, times ``--physics-steps`` control steps of the backend's
``step`` alone from the states after it with the controls held (then puts the states back), then ``--iterations``
iterations of ``runner.collect()`` (policy inference, task logic, resets, storage, returns / GAE) and
``runner.alg.update()``, with the backend's ``step`` timed inside the rollouts. Prints one ``SIDE_BY_SIDE_JSON``
line with the numbers bench/mjbatch_theirs.py prints for the example.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import mujoco
import numpy as np
import torch

from bench.mjbatch_side_by_side import MARK
from bench.profile import build_runner, physics_size


class StepClock:
    """Wraps ``physics.step`` (an instance attribute: the class is untouched) and counts its seconds and calls."""

    def __init__(self, physics: Any):
        self.inner, self.seconds, self.calls = physics.step, 0.0, 0

        def timed(ctrl: torch.Tensor) -> None:
            t = time.perf_counter()
            self.inner(ctrl)
            self.seconds += time.perf_counter() - t
            self.calls += 1

        physics.step = timed


def raw_physics_s(physics: Any, inner: Any, steps: int) -> float:
    """Seconds of ``steps`` control steps of the backend alone, the controls held; the states are put back."""
    state = physics.state_dict()
    ctrl = state["ctrl"].clone()
    t = time.perf_counter()
    for _ in range(steps):
        inner(ctrl)
    seconds = time.perf_counter() - t
    physics.load_state_dict(state)
    return seconds


def contacts_now(model: Any, physics: Any, worlds: int = 16) -> float:
    """Mean contacts of the first ``worlds`` worlds' current states (``mj_forward`` on a copy), counted as
    bench/mjbatch_theirs.py counts them."""
    state, data, counts = physics.state_dict(), mujoco.MjData(model), []
    for sim in range(min(worlds, physics.num_envs)):
        data.qpos[:], data.qvel[:] = state["qpos"][sim].numpy(), state["qvel"][sim].numpy()
        mujoco.mj_forward(model, data)
        counts.append(data.ncon)
    return float(np.mean(counts))


def iteration(runner: Any, it: int) -> tuple[float, float]:
    """One training iteration; the seconds of the collection and of the update."""
    t0 = time.perf_counter()
    runner.alg.set_iteration(it)
    runner.collect()
    t1 = time.perf_counter()
    runner.alg.update()
    return t1 - t0, time.perf_counter() - t1


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--physics-steps", type=int, default=20)
    p.add_argument("--torch-threads", type=int, default=0, help="runner.torch_threads (0: the task's default)")
    args = p.parse_args(argv)
    overrides = [f"runner.torch_threads={args.torch_threads}"] if args.torch_threads else []
    env, cfg, runner = build_runner(argparse.Namespace(task=args.task, num_envs=args.num_envs, device="cpu",
                                                       overrides=overrides))
    physics, n = env.physics, env.num_envs
    clock = StepClock(physics)
    runner.start()
    iteration(runner, 0)  # warm-up
    physics_s = raw_physics_s(physics, clock.inner, args.physics_steps)
    clock.seconds, clock.calls = 0.0, 0
    collect_s = update_s = 0.0
    contacts = []
    for it in range(1, args.iterations + 1):
        c, u = iteration(runner, it)
        collect_s, update_s = collect_s + c, update_s + u
        contacts.append(contacts_now(env.model, physics))
    sub, steps = physics.nsubsteps, runner.storage.T
    setup = physics_size(env, None)
    setup.update(mujoco=mujoco.__version__, contacts=float(np.mean(contacts)), steps_per_env=steps,
                 physics_threads=int(cfg.env.physics_threads), torch_threads=torch.get_num_threads(),
                 symmetry=str(getattr(cfg.algorithm, "symmetry", None)))
    env.close()
    result = {"physics_us": 1e6 * physics_s / (args.physics_steps * sub * n),
              "rollout_us": 1e6 * collect_s / (args.iterations * steps * sub * n),
              "rollout_physics_us": 1e6 * clock.seconds / (clock.calls * sub * n),
              "samples_per_s": args.iterations * steps * n / (collect_s + update_s),
              "update_s": update_s / args.iterations, "setup": setup}
    print(MARK + json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
