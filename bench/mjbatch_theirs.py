"""Their side of bench/mjbatch_side_by_side.py: mjbatch's Go1 joystick example, timed as its training runs it.

    bench/.venv-mjbatch/bin/python -P bench/mjbatch_theirs.py --mjbatch-src PATH --go1 FILE [--num-envs 1024]
        [--physics-steps 20] [--torch-threads N]          # then commands on stdin: physics, iteration, setup, quit

Runs with the bench venv's python (mujoco 3.14.0 and mjbatch 0.1.4) and imports nothing of this repo. It loads the
checkout's ``examples/go1_joystick.py`` as a module and runs its own code: ``Go1`` (the env on an mjbatch ``Batch``),
``ActorCritic``, ``rollout``, ``gae`` and ``update``, in the order of its ``train`` loop; only the loop around them
and the timers are this file's. It builds, runs one warm-up iteration, then answers commands from stdin, each with
one ``SIDE_BY_SIDE_JSON`` line (the orchestrator alternates the sides command by command).

The example asks ``mujoco_menagerie`` for ``unitree_go1``; this file answers with ``--go1`` instead (nothing is
downloaded). A file that lacks the Go1's names the example reads (a ``trunk`` body, an ``imu`` site, a site per
foot named as the foot geom, a ``spotlight`` light) gets them added to the spec, named in ``setup.adapted``: the
Go2-style test model has a ``base`` body, no ``imu`` site, no foot sites and no light. ``-P``: the script's folder
(bench/, whose profile.py would shadow the standard library's) is not put on the import path.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import types
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import torch

MARK = "SIDE_BY_SIDE_JSON "
COMMANDS = ("physics", "iteration", "engine", "setup")
"""What a side answers (a side without one of them fails on it)."""
FEET = ("FR", "FL", "RR", "RL")
"""The foot names the example reads (geoms, sites and sensors)."""


def adapt(spec: Any, adapted: list[str]) -> Any:
    """Add to ``spec`` the Go1 names the example reads that the file lacks; each addition is appended to
    ``adapted``."""
    root = next(b for b in spec.bodies if any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in b.joints))
    if spec.body("trunk") is None:
        adapted.append(f"body {root.name} renamed trunk")
        root.name = "trunk"
    if spec.site("imu") is None:
        root.add_site(name="imu")
        adapted.append("site imu added at the trunk's origin")
    added = [foot for foot in FEET if spec.site(foot) is None]
    for foot in added:
        geom = spec.geom(foot)
        geom.parent.add_site(name=foot, pos=geom.pos, size=[1.2 * float(geom.size[0]), 0, 0])
    if added:
        adapted.append(f"sites {' '.join(added)} added on the foot geoms (1.2 x their radius, for the touch sensors)")
    if spec.light("spotlight") is None:  # Menagerie's Go1 has one; the example deletes it
        spec.worldbody.add_light(name="spotlight")
        adapted.append("light spotlight added (the example deletes it)")
    return spec


def stand_in_menagerie(go1: Path, adapted: list[str]) -> types.ModuleType:
    """A ``mujoco_menagerie`` whose ``get(name).spec(entry)`` is the spec of ``go1`` (adapted)."""
    module = types.ModuleType("mujoco_menagerie")

    class Robot:
        def spec(self, entry: str | None = None) -> Any:
            return adapt(mujoco.MjSpec.from_file(str(go1)), adapted)

    module.get = lambda name: Robot()  # type: ignore[attr-defined]
    return module


def load_module(name: str, path: Path) -> Any:
    """Import ``path`` as the module ``name`` (registered in ``sys.modules``, so that others import it by name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_example(src: Path, go1: Path, adapted: list[str]) -> Any:
    """The checkout's example, with its helper ``window`` from the same folder and the stand-in Menagerie."""
    sys.modules["mujoco_menagerie"] = stand_in_menagerie(go1, adapted)
    load_module("window", src / "examples" / "window.py")
    return load_module("go1_joystick", src / "examples" / "go1_joystick.py")


class TimedBatch:
    """The env's ``Batch`` with its ``step`` timed (everything else passed through)."""

    def __init__(self, batch: Any):
        self._batch, self.seconds, self.substeps = batch, 0.0, 0

    def step(self, nstep: int = 1) -> None:
        t = time.perf_counter()
        self._batch.step(nstep=nstep)
        self.seconds += time.perf_counter() - t
        self.substeps += nstep

    def __getattr__(self, name: str) -> Any:
        return getattr(self._batch, name)


def contacts_now(env: Any, worlds: int = 16) -> float:
    """Mean contacts of the first ``worlds`` worlds' current states (``mj_forward`` on a copy: mjbatch binds no
    ``ncon``)."""
    m = env.batch.model
    data, counts = mujoco.MjData(m), []
    for sim in range(min(worlds, env.qpos.shape[0])):
        data.qpos[:], data.qvel[:] = env.qpos[sim], env.qvel[sim]
        mujoco.mj_forward(m, data)
        counts.append(data.ncon)
    return float(np.mean(counts))


def setup_of(ex: Any, m: Any, physics_threads: int, adapted: list[str], contacts: float) -> dict[str, Any]:
    """The physics settings of the example's model ``m`` as a side steps it, for the bench's printout."""
    return {"mujoco": mujoco.__version__, "timestep": float(m.opt.timestep), "substeps": int(ex.DECIMATION),
            "cone": mujoco.mjtCone(m.opt.cone).name.removeprefix("mjCONE_"),
            "solver": mujoco.mjtSolver(m.opt.solver).name.removeprefix("mjSOL_"),
            "iterations": int(m.opt.iterations), "ls_iterations": int(m.opt.ls_iterations),
            "integrator": mujoco.mjtIntegrator(m.opt.integrator).name.removeprefix("mjINT_"),
            "ngeom": int(m.ngeom), "nv": int(m.nv), "contacts": contacts, "steps_per_env": int(ex.HORIZON),
            "physics_threads": physics_threads, "torch_threads": torch.get_num_threads(), "adapted": adapted}


def engine_us(batch: Any, n: int, substeps: int, steps: int) -> float:
    """Raw physics of the example's model from its keyframe, every servo holding the keyframe's joint angles:
    us per world-substep of ``steps`` control steps. The same code steps an mjbatch ``Batch`` and a mujoco 4.0
    ``mujoco.batch.Batch`` (same ``reset`` / ``bind`` / ``step``), so the two engines step the same model from the
    same states."""
    batch.reset(np.arange(n), keyframe=0)
    qpos, ctrl = batch.bind("qpos"), batch.bind("ctrl")
    ctrl[:] = qpos[:, 7:7 + ctrl.shape[1]]
    t = time.perf_counter()
    for _ in range(steps):
        batch.step(nstep=substeps)
    return 1e6 * (time.perf_counter() - t) / (steps * substeps * n)


class TheirSide:
    """The example's env, actor, learner and optimizer as its ``train`` builds them, after one warm-up iteration;
    each method answers one command of ``serve``."""

    def __init__(self, args: argparse.Namespace):
        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        self.adapted: list[str] = []
        self.ex = ex = load_example(args.mjbatch_src, args.go1, self.adapted)
        ex.NUM_ENVS = self.n = args.num_envs  # the example's rollout buffers read it
        self.physics_steps = args.physics_steps
        torch.manual_seed(ex.SEED)
        self.env = ex.Go1(self.n, seed=ex.SEED)
        self.env.batch = self.timed = TimedBatch(self.env.batch)
        self.actor, self.learner = ex.ActorCritic().to(ex.ACTOR), ex.ActorCritic().to(ex.DEVICE)
        self.actor.load_state_dict(self.learner.state_dict())
        self.opt = torch.optim.Adam(self.learner.parameters(), ex.LR, fused=True)
        self.engine_batch = ex.Batch(self.env.batch.model, self.n)  # the same model, for ``engine``
        self.it, self.contacts = 0, [0.0]
        self.iteration()  # warm-up

    def physics(self) -> dict[str, float]:
        """Raw physics: ``physics_steps`` control steps of the batch alone, the controls held."""
        t = time.perf_counter()
        for _ in range(self.physics_steps):
            self.timed._batch.step(nstep=self.ex.DECIMATION)
        return {"physics_us": 1e6 * (time.perf_counter() - t) / (self.physics_steps * self.ex.DECIMATION * self.n)}

    def iteration(self) -> dict[str, float]:
        """One iteration of the example's ``train`` loop: the rollout with ``gae`` (our ``collect()`` computes the
        returns too), then ``update`` and the copy into the actor."""
        ex, opt, timed = self.ex, self.opt, self.timed
        opt.param_groups[0]["lr"] = float(np.interp(self.it, (0, ex.LR_TO), (ex.LR, ex.LR_END)))
        timed.seconds, timed.substeps = 0.0, 0
        t0 = time.perf_counter()
        batch, _ = ex.rollout(self.actor, self.env)
        targets = ex.gae(batch)
        t1 = time.perf_counter()
        ex.update(self.learner, opt, batch, *targets)
        self.actor.load_state_dict(self.learner.state_dict())
        t2 = time.perf_counter()
        self.it += 1
        self.contacts.append(contacts_now(self.env))
        return {"rollout_us": 1e6 * (t1 - t0) / (ex.HORIZON * ex.DECIMATION * self.n),
                "rollout_step_us": 1e6 * (t1 - t0) / (ex.HORIZON * self.n),
                "rollout_physics_us": 1e6 * timed.seconds / (timed.substeps * self.n),
                "samples_per_s": ex.HORIZON * self.n / (t2 - t0), "update_s": t2 - t1}

    def engine(self) -> dict[str, float]:
        """``engine_us`` of mjbatch (bench/mjbatch_engine.py times mujoco 4.0's batch on the same model)."""
        return {"engine_us": engine_us(self.engine_batch, self.n, self.ex.DECIMATION, self.physics_steps)}

    def setup(self) -> dict[str, Any]:
        return setup_of(self.ex, self.env.batch.model, int(self.env.batch.num_threads), self.adapted,
                        float(np.mean(self.contacts[1:])))


def serve(side: Any) -> None:
    """Answer the commands read from stdin (``COMMANDS``; ``quit`` or the end of the input ends it),
    each with one ``MARK`` line of JSON; the first such line says the side is built."""
    print(MARK + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        if command not in COMMANDS:
            raise SystemExit(f"unknown command {command!r}: expected one of {', '.join(COMMANDS)} or quit")
        print(MARK + json.dumps(getattr(side, command)()), flush=True)


def side_parser(doc: str) -> argparse.ArgumentParser:
    """The options every child side takes (the side-by-side script passes them)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--mjbatch-src", type=Path, required=True)
    p.add_argument("--go1", type=Path, required=True)
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--physics-steps", type=int, default=20)
    return p


def main(argv: list[str] | None = None) -> None:
    p = side_parser(__doc__)
    p.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    serve(TheirSide(p.parse_args(argv)))


if __name__ == "__main__":
    main()
