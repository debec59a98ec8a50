"""The robot check's simulations on native MuJoCo (one ``MjData``, no torch): zero-action standing, a PD step
response per actuator group, and random actions with pushes under candidate solver settings.

Everything reads the compiled scene of the task (``ResolvedRobot``: the floor, the servos the task uses, every
index by name), so what is measured is what training steps. ``tools/check_robot.py`` turns the numbers into a
verdict.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import mujoco
import numpy as np

from envs.robots.resolved import ResolvedRobot

HUGE_VEL = 1e3
"""A joint or base speed above this (rad/s or m/s) counts as diverged."""
LIMIT_MARGIN = 0.02
"""A joint within this (rad) of its range's end is at its limit."""
CAP = 99.0
"""Overshoot and error shares are capped here (a blown-up servo gives any number)."""
SATURATED = 0.98
"""A servo above this share of its effort limit is saturated."""


@contextlib.contextmanager
def quiet_mujoco_warnings() -> Iterator[None]:
    """MuJoCo's own warnings ("Nan, Inf or huge value in QACC ...") unprinted: the check provokes divergence on
    purpose and counts it itself."""
    old = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda _message: None)
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(old)


def _diverged(model: mujoco.MjModel, data: mujoco.MjData) -> bool:
    return (data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0 or not np.isfinite(data.qpos).all()
            or not np.isfinite(data.qvel).all() or float(np.abs(data.qvel).max(initial=0.0)) > HUGE_VEL)


class Sim:
    """One simulation of the task's scene with the robot standing at its default pose."""

    def __init__(self, robot: ResolvedRobot, model: mujoco.MjModel | None = None):
        self.robot = robot
        self.model = model if model is not None else robot.model
        self.data = mujoco.MjData(self.model)
        self.qadr = np.array(robot.joint_qpos_adr)
        self.dadr = np.array(robot.joint_dof_adr)
        self.default = np.array(robot.default_joint_pos)
        source = np.array(robot.ctrl_from_policy, dtype=int)  # per actuator: policy index, or n + held index
        self.policy_ctrl = np.flatnonzero(source < robot.num_joints)
        self.policy_index = source[self.policy_ctrl]
        self.held_ctrl = np.flatnonzero(source >= robot.num_joints)
        self.held_target = np.array(robot.held_joint_pos, dtype=float)[source[self.held_ctrl] - robot.num_joints]
        self.reset()

    def reset(self, height: float | None = None) -> None:
        m, d, r = self.model, self.data, self.robot
        mujoco.mj_resetData(m, d)
        b = r.base_qpos_adr
        d.qpos[b:b + 3] = (0.0, 0.0, r.spec.base_height if height is None else height)
        d.qpos[b + 3:b + 7] = (1.0, 0.0, 0.0, 0.0)
        d.qpos[self.qadr] = self.default
        d.qpos[list(r.held_qpos_adr)] = r.held_joint_pos
        self.held_base = d.qpos[b:b + 7].copy()
        mujoco.mj_forward(m, d)
        d.ctrl[self.held_ctrl] = self.held_target  # held joints' servos hold their declared pose
        self.set_targets(self.default)

    def step_held(self) -> None:
        """One physics step with the base put back where ``reset`` put it, at rest (hanging in the air)."""
        b, v = self.robot.base_qpos_adr, self.robot.base_dof_adr
        mujoco.mj_step(self.model, self.data)
        self.data.qpos[b:b + 7] = self.held_base
        self.data.qvel[v:v + 6] = 0.0

    def set_targets(self, targets: np.ndarray) -> None:
        """Joint targets in policy order (rad)."""
        self.data.ctrl[self.policy_ctrl] = targets[self.policy_index]

    @property
    def base_height(self) -> float:
        return float(self.data.qpos[self.robot.base_qpos_adr + 2])

    @property
    def tilt(self) -> float:
        """Angle (rad) between the base's z axis and the vertical."""
        q = self.data.qpos[self.robot.base_qpos_adr + 3:self.robot.base_qpos_adr + 7]
        _, x, y, _ = q / max(float(np.linalg.norm(q)), 1e-12)
        return math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (x * x + y * y))))


def action_scale(robot: ResolvedRobot) -> np.ndarray:
    """Joint target offset (rad) per unit of action, per actuated joint (policy order)."""
    per_joint = getattr(robot, "action_scale", None)  # resolved per group where the robot has one
    if per_joint is not None:
        return np.asarray(per_joint, dtype=float)
    return np.full(robot.num_joints, float(robot.spec.action_scale))


def foot_geoms(robot: ResolvedRobot) -> set[int]:
    """Collision geoms of the feet: geoms named as feet, or every geom of a body named as a foot."""
    m = robot.model
    out = set()
    for name in robot.foot_names:
        g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, name)
        if g >= 0:
            out.add(g)
            continue
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        out |= {int(i) for i in np.flatnonzero(m.geom_bodyid == b)}
    return out


def robot_bodies(robot: ResolvedRobot) -> set[int]:
    """The base body and every body below it."""
    m, base = robot.model, robot.base_body_id
    out = {base}
    for b in range(m.nbody):
        p = b
        while p > 0:
            if p == base:
                out.add(b)
                break
            p = int(m.body_parentid[p])
    return out


@dataclass(frozen=True)
class Standing:
    """Zero actions (targets at the default pose) for ``seconds``, after a drop from ``base_height``."""

    seconds: float
    base_height: float
    """Mean base height over the last second (m)."""
    min_height: float
    tilt: float
    """Largest tilt over the last second (rad)."""
    diverged_at: float | None
    """Time of the first diverged step (s), None when none."""
    contacts: dict[str, float]
    """Non-foot bodies touching the floor after the first 0.5 s: share of the steps."""
    at_limit: dict[str, float]
    """Actuated joints within LIMIT_MARGIN of their range's end over the last second: share of the steps."""
    saturation: dict[str, float]
    """Actuated joints whose servo force exceeds SATURATED x its limit over the last second: share of the steps."""
    peak_effort: dict[str, float]
    """Largest |servo force| / effort limit over the last second, per actuated joint."""


def standing(robot: ResolvedRobot, seconds: float = 4.0) -> Standing:
    sim = Sim(robot)
    m, d = sim.model, sim.data
    steps = int(round(seconds / m.opt.timestep))
    last = steps - int(round(1.0 / m.opt.timestep))
    settle = int(round(0.5 / m.opt.timestep))
    feet, mine = foot_geoms(robot), robot_bodies(robot)
    names = robot.joint_names
    lo, hi = m.jnt_range[[m.joint(n).id for n in names]].T
    limited = m.jnt_limited[[m.joint(n).id for n in names]].astype(bool)
    effort = np.array(robot.effort_limit)
    act_of_joint = np.array([list(robot.ctrl_from_policy).index(i) for i in range(len(names))])
    heights, tilts = [], []
    contact_steps: dict[str, int] = {}
    at_limit = np.zeros(len(names))
    saturated = np.zeros(len(names))
    peak = np.zeros(len(names))
    diverged_at = None
    for k in range(steps):
        mujoco.mj_step(m, d)
        if _diverged(m, d):
            diverged_at = (k + 1) * m.opt.timestep
            break
        if k >= settle:
            touching = set()
            for c in d.contact[:d.ncon]:
                for g, other in ((c.geom1, c.geom2), (c.geom2, c.geom1)):
                    if m.geom_bodyid[g] in mine and m.geom_bodyid[other] not in mine and g not in feet:
                        touching.add(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) or str(g))
            for b in touching:
                contact_steps[b] = contact_steps.get(b, 0) + 1
        if k >= last:
            heights.append(sim.base_height)
            tilts.append(sim.tilt)
            q = d.qpos[sim.qadr]
            at_limit += limited & ((q - lo < LIMIT_MARGIN) | (hi - q < LIMIT_MARGIN))
            share = np.abs(d.actuator_force[act_of_joint]) / np.where(np.isfinite(effort), effort, np.inf)
            saturated += share > SATURATED
            peak = np.maximum(peak, share)
    n_last = max(len(heights), 1)
    n_contact = max(steps - settle, 1)
    return Standing(
        seconds=seconds, base_height=float(np.mean(heights)) if heights else float("nan"),
        min_height=float(np.min(heights)) if heights else float("nan"),
        tilt=float(np.max(tilts)) if tilts else float("nan"), diverged_at=diverged_at,
        contacts={b: round(c / n_contact, 3) for b, c in sorted(contact_steps.items())},
        at_limit={n: round(float(a) / n_last, 3) for n, a in zip(names, at_limit, strict=True) if a > 0},
        saturation={n: round(float(s) / n_last, 3) for n, s in zip(names, saturated, strict=True) if s > 0},
        peak_effort={n: round(float(p), 3) for n, p in zip(names, peak, strict=True)})


@dataclass(frozen=True)
class StepResponse:
    """One actuator group's joints stepped by ``step`` rad together, the base held in the air (worst joint)."""

    group: str
    joints: tuple[str, ...]
    kp: float
    kd: float
    step: float
    rise_time: float
    """10% to 90% of the step (s); inf when it never gets there."""
    overshoot: float
    """Largest excursion past the target, as a share of the step."""
    steady_state_error: float
    """|target - angle| after ``hold`` seconds, as a share of the step."""
    final_speed: float = 0.0
    """Largest joint speed (rad/s) over the last 0.1 s of the hold: a servo that still moves there oscillates."""


def groups(robot: ResolvedRobot) -> list[tuple[str, list[int]]]:
    """(label, policy indices) per actuator group: the spec's ``ActuatorGroup`` regexes, or the file's actuators
    grouped by identical gains."""
    names = robot.joint_names
    spec_groups = robot.spec.actuators
    if not isinstance(spec_groups, str):
        out: list[tuple[str, list[int]]] = []
        for g in spec_groups:
            members = [i for i, n in enumerate(names) if re.fullmatch(g.joints, n)]
            if members:
                out.append((g.joints, members))
        return out
    by_gain: dict[tuple[float, float, float], list[int]] = {}
    for i in range(len(names)):
        by_gain.setdefault((robot.kp[i], robot.kd[i], robot.effort_limit[i]), []).append(i)
    return [(f"kp {k[0]:g} kd {k[1]:g} limit {k[2]:g}", members) for k, members in by_gain.items()]


def step_response(robot: ResolvedRobot, settle: float = 0.3, hold: float = 0.5) -> list[StepResponse]:
    """Each group in turn: the base held 0.5 m above its reset height, the group's targets stepped by one unit
    of action (``action_scale`` rad, away from the nearer limit), the others at the default pose."""
    out = []
    m = robot.model
    dt = m.opt.timestep
    names = robot.joint_names
    lo, hi = m.jnt_range[[m.joint(n).id for n in names]].T
    limited = m.jnt_limited[[m.joint(n).id for n in names]].astype(bool)
    scale = action_scale(robot)
    for label, members in groups(robot):
        sim = Sim(robot)
        d = sim.data
        sim.reset(robot.spec.base_height + 0.5)
        for _ in range(int(round(settle / dt))):
            sim.step_held()
        start = d.qpos[sim.qadr].copy()
        default = sim.default
        up = np.where(limited, hi - default >= default - lo, True)
        size = np.where(up, 1.0, -1.0) * scale
        targets = default.copy()
        targets[members] = default[members] + size[members]
        sim.set_targets(targets)
        trace, speeds = [], []
        for _ in range(int(round(hold / dt))):
            sim.step_held()
            trace.append(d.qpos[sim.qadr][members].copy())
            speeds.append(float(np.abs(d.qvel[sim.dadr][members]).max()))
        y = np.array(trace)  # [T, group]
        s = size[members]
        progress = (y - start[members]) / (targets[members] - start[members])
        rises, overs, errors = [], [], []
        for j in range(len(members)):
            p = progress[:, j]
            t10 = np.flatnonzero(p >= 0.1)
            t90 = np.flatnonzero(p >= 0.9)
            rises.append((t90[0] - t10[0]) * dt if len(t10) and len(t90) else math.inf)
            overs.append(max(0.0, float(p.max()) - 1.0))
            errors.append(abs(float(targets[members][j] - y[-1, j])) / abs(float(s[j])))
        i0 = members[0]
        out.append(StepResponse(group=label, joints=tuple(names[i] for i in members), kp=robot.kp[i0],
                                kd=robot.kd[i0], step=float(abs(s[0])), rise_time=float(max(rises)),
                                overshoot=round(min(float(np.nan_to_num(max(overs), nan=CAP)), CAP), 3),
                                steady_state_error=round(min(float(np.nan_to_num(max(errors), nan=CAP)), CAP), 3),
                                final_speed=round(min(float(np.nan_to_num(max(speeds[-int(round(0.1 / dt)):]),
                                                                          nan=CAP)), CAP), 3)))
    return out


@dataclass(frozen=True)
class SolverTrial:
    """Random actions with pushes under one solver setting."""

    iterations: int
    ls_iterations: int
    cone: str
    diverged: float
    """Share of the rollouts that diverged."""
    steps_per_s: float
    """Physics steps per second of CPU time (one thread, this machine)."""


@dataclass(frozen=True)
class ResetSpread:
    """How the task's resets spread the start state (``RandomizationConfig``): the solver trials start there,
    since a reset's pose (feet pressed into the floor, joints far from the default pose) is where a cheap solver
    setting diverges first."""

    joint_scale: tuple[float, float] = (1.0, 1.0)
    """Joint positions are the default pose times a uniform factor in this range."""
    base_vel: float = 0.0
    """Each base velocity component is uniform in [-base_vel, base_vel] (m/s, rad/s)."""


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
        d.qvel[v:v + 6] = rng.uniform(-spread.base_vel, spread.base_vel, 6)
        mujoco.mj_forward(m, d)
        mujoco.mj_getState(m, d, states[r], what)
    return states, ctrl


def solver_trial(robot: ResolvedRobot, iterations: int, ls_iterations: int, cone: str, rollouts: int = 16,
                 seconds: float = 2.0, decimation: int = 4, push: float = 1.0, seed: int = 0,
                 repeats: int = 3, spread: ResetSpread = ResetSpread()) -> SolverTrial:
    """``rollouts`` episodes from the task's reset spread (``spread``) of uniform random actions in [-1, 1]
    (targets = default + action_scale x action, changed every ``decimation`` steps) with a base push of up to
    ``push`` m/s every second, run by ``mujoco.rollout`` on one thread (so the steps/s are the physics' alone). A
    rollout diverged when its state turns non-finite or huge, or MuJoCo resets it after a bad acceleration (its
    time jumps back)."""
    from mujoco import rollout

    m = copy.deepcopy(robot.model)
    m.opt.iterations, m.opt.ls_iterations = iterations, ls_iterations
    m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC if cone == "elliptic" else mujoco.mjtCone.mjCONE_PYRAMIDAL
    rng = np.random.default_rng(seed)
    sim = Sim(robot, m)
    states0, ctrl0 = _start_states(robot, m, rollouts, spread, rng)
    steps = int(round(seconds / m.opt.timestep))
    scale = action_scale(robot)
    mass = float(sum(m.body_mass[b] for b in robot_bodies(robot)))
    control = np.zeros((rollouts, steps, m.nu + m.nv))
    control[:, :, :m.nu] = ctrl0
    for r in range(rollouts):
        for k in range(0, steps, decimation):
            targets = sim.default + scale * rng.uniform(-1.0, 1.0, robot.num_joints)
            control[r, k:k + decimation][:, sim.policy_ctrl] = targets[sim.policy_index]
        for k in range(int(round(1.0 / m.opt.timestep)), steps, int(round(1.0 / m.opt.timestep))):
            dv = rng.uniform(-push, push, 2)
            control[r, k, m.nu + robot.base_dof_adr:m.nu + robot.base_dof_adr + 2] = mass * dv / m.opt.timestep
    spec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_QFRC_APPLIED
    data = mujoco.MjData(m)
    elapsed = math.inf
    for _ in range(repeats):  # CPU time (other processes' load does not count), the fastest of a few runs
        t0 = time.process_time()
        states, _ = rollout.rollout(m, data, states0, control, control_spec=spec)
        elapsed = min(elapsed, time.process_time() - t0)
    t = states[:, :, 0]
    expected = states0[:, :1] + m.opt.timestep * np.arange(1, steps + 1)
    qvel = states[:, :, 1 + m.nq:1 + m.nq + m.nv]
    bad = (~np.isfinite(states).all(axis=2) | (np.abs(qvel).max(axis=2) > HUGE_VEL)
           | (np.abs(t - expected) > 0.5 * m.opt.timestep)).any(axis=1)
    return SolverTrial(iterations, ls_iterations, cone, round(float(bad.mean()), 3), round(rollouts * steps / elapsed))
