"""The robot check's random-action trial: many rollouts of uniform random actions with pushes, from the task's
resets, under one solver setting (``mujoco.rollout`` on a thread pool, in chunks so the state arrays stay small).
Enough world-steps (1024 rollouts of 2 s: about 4e5) to see a divergence rate of 1e-4 per step, the rate at
which a cheap solver setting shows up in training's ``div`` column.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass

import mujoco
import numpy as np

from envs.robot_check.trials import HUGE_VEL, Sim, action_scale, robot_bodies
from envs.robots.resolved import ResolvedRobot
from envs.scenes.assemble import SOLVERS

ROLLOUTS = 1024
"""Rollouts of the divergence trial (``solver_trial``)."""
CHUNK = 128
"""Rollouts per ``mujoco.rollout`` call."""
THREADS = min(2, os.cpu_count() or 1)
"""Threads of the rollouts."""
DECIMATION = 4
"""Physics steps an action is held in the trials: the task's (50 Hz control at the usual 0.005 s step)."""


@dataclass(frozen=True)
class SolverTrial:
    """Random actions with pushes under one solver setting."""

    iterations: int
    ls_iterations: int
    cone: str
    diverged: float
    """Share of the rollouts that diverged."""
    steps_per_s: float
    """Physics steps per second of CPU time (all threads; this machine)."""
    rollouts: int = 0
    """Rollouts run."""
    steps: int = 0
    """World-steps run (rollouts x steps per rollout)."""
    rate: float = 0.0
    """Diverged rollouts per world-step (each rollout diverges once at most: a lower bound of the rate per step)."""
    impratio: float = 0.0
    """The impratio of the trial's model."""
    solver: str = "newton"
    """The constraint solver of the trial's model (``SOLVER_NAMES``)."""


@dataclass(frozen=True)
class ResetSpread:
    """How the task's resets spread the start state (``RandomizationConfig``): the solver trials start there,
    since a reset's pose (feet pressed into the floor, joints far from the default pose) is where a cheap solver
    setting diverges first."""

    joint_scale: tuple[float, float] = (1.0, 1.0)
    """Joint positions are the default pose times a uniform factor in this range."""
    base_vel: float = 0.0
    """Each base velocity component is uniform in [-base_vel, base_vel] (m/s, rad/s)."""
    joint_offset: float = 0.0
    """Then each joint position is offset by a uniform amount in [-joint_offset, joint_offset] (rad; a tracking
    task's start noise), within its range."""


def _start_states(robot: ResolvedRobot, m: mujoco.MjModel, rollouts: int, spread: ResetSpread,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(one start state per rollout, the servo controls at reset) after the task's reset spread."""
    sim = Sim(robot, m)
    d, what = sim.data, mujoco.mjtState.mjSTATE_FULLPHYSICS
    ctrl = d.ctrl.copy()
    states = np.zeros((rollouts, mujoco.mj_stateSize(m, what)))
    v = robot.base_dof_adr
    for r in range(rollouts):
        sim.reset()
        d.qpos[sim.qadr] = sim.default * rng.uniform(*spread.joint_scale, robot.num_joints)
        if spread.joint_offset > 0:
            n = robot.num_joints  # the driven joints' first n are the trained ones, in policy order
            q = d.qpos[sim.qadr] + rng.uniform(-spread.joint_offset, spread.joint_offset, n)
            d.qpos[sim.qadr] = np.where(sim.limited[:n], np.clip(q, sim.lo[:n], sim.hi[:n]), q)
        d.qvel[v:v + 6] = rng.uniform(-spread.base_vel, spread.base_vel, 6)
        mujoco.mj_forward(m, d)
        mujoco.mj_getState(m, d, states[r], what)
    return states, ctrl


SOLVER_NAMES = {solver: name for name, solver in SOLVERS.items()}
"""``SimOverrides.solver``'s name of each MuJoCo constraint solver."""


def solver_name(m: mujoco.MjModel) -> str:
    """The model's constraint solver by ``SimOverrides.solver`` name."""
    return SOLVER_NAMES[mujoco.mjtSolver(m.opt.solver)]


def with_solver(model: mujoco.MjModel, iterations: int, ls_iterations: int, cone: str,
                impratio: float | None = None, solver: str | None = None) -> mujoco.MjModel:
    """A copy of ``model`` with these solver settings (``solver``: by name; None keeps the model's)."""
    m = copy.deepcopy(model)
    m.opt.iterations, m.opt.ls_iterations = iterations, ls_iterations
    if solver is not None:
        m.opt.solver = SOLVERS[solver]
    m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC if cone == "elliptic" else mujoco.mjtCone.mjCONE_PYRAMIDAL
    if impratio is not None:
        m.opt.impratio = impratio
    return m


def _controls(robot: ResolvedRobot, m: mujoco.MjModel, sim: Sim, ctrl0: np.ndarray, rollouts: int, steps: int,
              decimation: int, push: float, rng: np.random.Generator) -> np.ndarray:
    """[rollouts, steps, nu + nv]: servo targets of uniform random actions held for ``decimation`` steps, and a
    base push (an impulse of up to ``push`` m/s) every second."""
    control = np.zeros((rollouts, steps, m.nu + m.nv))
    control[:, :, :m.nu] = ctrl0
    n_act = -(-steps // decimation)
    actions = rng.uniform(-1.0, 1.0, (rollouts, n_act, robot.num_joints))
    targets = np.repeat(sim.default + action_scale(robot) * actions, decimation, axis=1)[:, :steps]
    control[:, :, sim.policy_ctrl] = targets[:, :, sim.policy_index]
    mass = float(sum(m.body_mass[b] for b in robot_bodies(robot)))
    second = int(round(1.0 / m.opt.timestep))
    for k in range(second, steps, second):
        dv = rng.uniform(-push, push, (rollouts, 2))
        control[:, k, m.nu + robot.base_dof_adr:m.nu + robot.base_dof_adr + 2] = mass * dv / m.opt.timestep
    return control


def solver_trial(robot: ResolvedRobot, iterations: int, ls_iterations: int, cone: str, rollouts: int = ROLLOUTS,
                 seconds: float = 2.0, decimation: int | None = None, push: float = 1.0, seed: int = 0,
                 spread: ResetSpread = ResetSpread(), impratio: float | None = None,
                 threads: int = THREADS) -> SolverTrial:
    """``rollouts`` episodes from the task's reset spread (``spread``) of uniform random actions in [-1, 1]
    (targets = default + action_scale x action, changed every ``decimation`` steps: None, the robot's
    ``sim.substeps``, else DECIMATION) with a base push of up to
    ``push`` m/s every second, run by ``mujoco.rollout`` (CPU time of all its threads: the physics' alone). A
    rollout diverged when its state turns non-finite or huge, or MuJoCo resets it after a bad acceleration (its
    time jumps back)."""
    from mujoco import rollout

    m = with_solver(robot.model, iterations, ls_iterations, cone, impratio)
    decimation = decimation or robot.spec.sim.substeps or DECIMATION
    rng = np.random.default_rng(seed)
    sim = Sim(robot, m)
    steps = int(round(seconds / m.opt.timestep))
    spec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_QFRC_APPLIED
    datas = [mujoco.MjData(m) for _ in range(max(1, threads))]
    bad, elapsed = 0, 0.0
    for first in range(0, rollouts, CHUNK):
        n = min(CHUNK, rollouts - first)
        states0, ctrl0 = _start_states(robot, m, n, spread, rng)
        control = _controls(robot, m, sim, ctrl0, n, steps, decimation, push, rng)
        t0 = time.process_time()
        states, _ = rollout.rollout(m, datas if len(datas) > 1 else datas[0], states0, control, control_spec=spec)
        elapsed += time.process_time() - t0
        bad += int(_diverged(m, states, states0, steps).sum())
    total = rollouts * steps
    return SolverTrial(iterations, ls_iterations, cone, round(bad / rollouts, 4),
                       round(total / max(elapsed, 1e-9)), rollouts, total, bad / total, float(m.opt.impratio),
                       solver_name(m))


def _diverged(m: mujoco.MjModel, states: np.ndarray, states0: np.ndarray, steps: int) -> np.ndarray:
    t = states[:, :, 0]
    expected = states0[:, :1] + m.opt.timestep * np.arange(1, steps + 1)
    qvel = states[:, :, 1 + m.nq:1 + m.nq + m.nv]
    return (~np.isfinite(states).all(axis=2) | (np.abs(qvel).max(axis=2) > HUGE_VEL)
            | (np.abs(t - expected) > 0.5 * m.opt.timestep)).any(axis=1)


def rate_text(rate: float) -> str:
    """A rate per step, e.g. ``2.4e-06``, or ``0``."""
    return "0" if rate == 0 else f"{rate:.1e}"

