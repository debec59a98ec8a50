"""Our side of bench/mjbatch_side_by_side.py: a task's training as train.py builds it, timed as the example's.

    python -m bench.mjbatch_ours --task quadruped-flat [--num-envs 1024] [--physics-steps 20] [--torch-threads N]
        # then commands on stdin: physics, iteration, setup, quit (bench/mjbatch_theirs.py's serve)

Builds the task with its defaults (``bench.profile.build_runner``: the runner, the algorithm, torch and physics
threads as train.py sets them) and runs one warm-up iteration. ``physics`` times ``--physics-steps`` control steps
of the backend's ``step`` alone from the current states with the controls held (then puts the states back);
``iteration`` times ``runner.collect()`` (policy inference, task logic, resets, storage, returns / GAE) and
``runner.alg.update()``, with the backend's ``step`` timed inside the rollout. Each answer is one
``SIDE_BY_SIDE_JSON`` line with the numbers bench/mjbatch_theirs.py gives for the example.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import mujoco
import numpy as np
import torch

from bench.mjbatch_theirs import serve
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


def contacts_now(model: Any, physics: Any, worlds: int = 16) -> float:
    """Mean contacts of the first ``worlds`` worlds' current states (``mj_forward`` on a copy), counted as
    bench/mjbatch_theirs.py counts them."""
    state, data, counts = physics.state_dict(), mujoco.MjData(model), []
    for sim in range(min(worlds, physics.num_envs)):
        data.qpos[:], data.qvel[:] = state["qpos"][sim].numpy(), state["qvel"][sim].numpy()
        mujoco.mj_forward(model, data)
        counts.append(data.ncon)
    return float(np.mean(counts))


class OurSide:
    """The task's env and runner as train.py builds them, after one warm-up iteration; each method answers one
    command of ``serve``."""

    def __init__(self, args: argparse.Namespace):
        overrides = [f"runner.torch_threads={args.torch_threads}"] if args.torch_threads else []
        self.env, self.cfg, self.runner = build_runner(argparse.Namespace(
            task=args.task, num_envs=args.num_envs, device="cpu", overrides=overrides))
        self.sim, self.n, self.physics_steps = self.env.physics, self.env.num_envs, args.physics_steps
        self.clock = StepClock(self.sim)
        self.runner.start()
        self.it, self.contacts = 0, [0.0]
        self.iteration()  # warm-up

    def physics(self) -> dict[str, float]:
        """Raw physics: ``physics_steps`` control steps of the backend alone, the controls held; the states are put
        back after."""
        state = self.sim.state_dict()
        ctrl = state["ctrl"].clone()
        t = time.perf_counter()
        for _ in range(self.physics_steps):
            self.clock.inner(ctrl)
        seconds = time.perf_counter() - t
        self.sim.load_state_dict(state)
        return {"physics_us": 1e6 * seconds / (self.physics_steps * self.sim.nsubsteps * self.n)}

    def iteration(self) -> dict[str, float]:
        """One training iteration: ``runner.collect()`` then ``runner.alg.update()``."""
        runner, clock = self.runner, self.clock
        clock.seconds, clock.calls = 0.0, 0
        t0 = time.perf_counter()
        runner.alg.set_iteration(self.it)
        runner.collect()
        t1 = time.perf_counter()
        runner.alg.update()
        t2 = time.perf_counter()
        self.it += 1
        self.contacts.append(contacts_now(self.env.model, self.sim))
        sub, steps = self.sim.nsubsteps, runner.storage.T
        return {"rollout_us": 1e6 * (t1 - t0) / (steps * sub * self.n),
                "rollout_step_us": 1e6 * (t1 - t0) / (steps * self.n),
                "rollout_physics_us": 1e6 * clock.seconds / (clock.calls * sub * self.n),
                "samples_per_s": steps * self.n / (t2 - t0), "update_s": t2 - t1}

    def setup(self) -> dict[str, Any]:
        setup = physics_size(self.env, None)
        setup.update(mujoco=mujoco.__version__, contacts=float(np.mean(self.contacts[1:])),
                     steps_per_env=self.runner.storage.T, physics_threads=int(self.cfg.env.physics_threads),
                     torch_threads=torch.get_num_threads(),
                     symmetry=str(getattr(self.cfg.algorithm, "symmetry", None)))
        return setup


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--physics-steps", type=int, default=20)
    p.add_argument("--torch-threads", type=int, default=0, help="runner.torch_threads (0: the task's default)")
    side = OurSide(p.parse_args(argv))
    try:
        serve(side)
    finally:
        side.env.close()


if __name__ == "__main__":
    main()
