"""The robot check's simulations on native MuJoCo (one ``MjData``, no torch): the shared ``Sim`` and zero-action
standing, free or with the base supported. The step response is in ``servo.py``, random actions with pushes under
solver settings in ``rollouts.py``.

Everything reads the compiled scene of the task (``ResolvedRobot``: the floor, the servos the task uses, every
index by name), so what is measured is what training steps. ``verdict.py`` turns the numbers into a verdict.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

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
POSE_ERRORS_LISTED = 3
"""The standing trial reports this many joints furthest from their pose."""
SIDEWAYS_ANGLE = 30.0
"""A hinge whose axis is within this angle (degrees) of the base's forward axis at the default pose turns a leg
sideways: hip abduction / roll (``Sim.sideways``)."""


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


def diverged(model: mujoco.MjModel, data: mujoco.MjData) -> bool:
    return (data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0 or not np.isfinite(data.qpos).all()
            or not np.isfinite(data.qvel).all() or float(np.abs(data.qvel).max(initial=0.0)) > HUGE_VEL)


class Sim:
    """One simulation of the task's scene with the robot standing at its default pose. The driven joints are the
    trained ones (policy order) then the held ones; ``driven_*`` arrays follow that order."""

    def __init__(self, robot: ResolvedRobot, model: mujoco.MjModel | None = None):
        self.robot = robot
        self.model = m = model if model is not None else robot.model
        self.data = mujoco.MjData(m)
        self.qadr = np.array(robot.joint_qpos_adr, dtype=int)
        self.dadr = np.array(robot.joint_dof_adr, dtype=int)
        self.default = np.array(robot.default_joint_pos)
        source = np.array(robot.ctrl_from_policy, dtype=int)  # per actuator: policy index, or n + held index
        self.policy_ctrl = np.flatnonzero(source < robot.num_joints)
        self.policy_index = source[self.policy_ctrl]
        self.held_ctrl = np.flatnonzero(source >= robot.num_joints)
        self.held_target = np.array(robot.held_joint_pos, dtype=float)[source[self.held_ctrl] - robot.num_joints]
        self.driven_names = tuple(robot.joint_names) + tuple(robot.held_joint_names)
        joints = [m.joint(n) for n in self.driven_names]
        self.driven_qadr = np.array([int(j.qposadr[0]) for j in joints], dtype=int)
        self.driven_dadr = np.array([int(j.dofadr[0]) for j in joints], dtype=int)
        self.driven_target = np.concatenate([self.default, np.array(robot.held_joint_pos, dtype=float)])
        order = np.argsort(source, kind="stable")  # actuator of each driven joint (sources are 0 .. n + held - 1)
        self.driven_ctrl = order[:len(self.driven_names)]
        ids = [j.id for j in joints]
        self.limited = m.jnt_limited[ids].astype(bool)
        self.lo, self.hi = m.jnt_range[ids].T
        lim = np.where(m.actuator_forcelimited[self.driven_ctrl].astype(bool),
                       np.abs(m.actuator_forcerange[self.driven_ctrl]).max(axis=1), np.inf)
        self.effort = lim
        self.reset()
        feet = {int(m.geom_bodyid[g]) for g in foot_geoms(robot)}
        self.sideways = sideways_joints(m, self.data, robot.base_body_id, ids, feet)
        """Indices into the driven joints of those that turn a leg sideways (SIDEWAYS_ANGLE)."""

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

    def step_upright(self) -> None:
        """One physics step with the base kept upright above its start (x, y and orientation put back, their
        speeds zeroed) but free to sink: the legs carry the whole weight, balance is not theirs to keep."""
        b, v = self.robot.base_qpos_adr, self.robot.base_dof_adr
        mujoco.mj_step(self.model, self.data)
        self.data.qpos[b:b + 2] = self.held_base[:2]
        self.data.qpos[b + 3:b + 7] = self.held_base[3:]
        self.data.qvel[v:v + 2] = 0.0
        self.data.qvel[v + 3:v + 6] = 0.0

    def set_targets(self, targets: np.ndarray) -> None:
        """Joint targets in policy order (rad)."""
        self.data.ctrl[self.policy_ctrl] = targets[self.policy_index]

    def set_driven(self, targets: np.ndarray) -> None:
        """Targets of every driven joint (trained, then held; rad)."""
        self.data.ctrl[self.driven_ctrl] = targets

    @property
    def base_height(self) -> float:
        return float(self.data.qpos[self.robot.base_qpos_adr + 2])

    @property
    def tilt(self) -> float:
        """Angle (rad) between the base's z axis and the vertical."""
        q = self.data.qpos[self.robot.base_qpos_adr + 3:self.robot.base_qpos_adr + 7]
        _, x, y, _ = q / max(float(np.linalg.norm(q)), 1e-12)
        return math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (x * x + y * y))))

    def foot_xy(self) -> np.ndarray:
        """Horizontal position of each foot's site, [feet, 2] (m)."""
        adr = np.array(self.robot.foot_pos_adr, dtype=int).reshape(-1, 3)
        return self.data.sensordata[adr[:, :2]].copy()


def sideways_joints(m: mujoco.MjModel, d: mujoco.MjData, base: int, ids: list[int], feet: set[int]) -> np.ndarray:
    """Indices into ``ids`` of the hinges above a foot body (``feet``) whose axis (world frame, as ``d`` stands) is
    within SIDEWAYS_ANGLE of the base body's forward (x) axis: the joints that splay a leg sideways (hip abduction /
    roll, ankle roll), found from the geometry, not the names."""
    above: set[int] = set()
    for b in feet:
        while b > 0:
            above.add(b)
            b = int(m.body_parentid[b])
    forward = d.xmat[base].reshape(3, 3)[:, 0]
    hinge = m.jnt_type[ids] == mujoco.mjtJoint.mjJNT_HINGE
    along = np.abs(d.xaxis[ids] @ forward) > math.cos(math.radians(SIDEWAYS_ANGLE))
    leg = np.array([int(m.jnt_bodyid[j]) in above for j in ids], dtype=bool)
    return np.flatnonzero(hinge & along & leg)


def action_scale(robot: ResolvedRobot) -> np.ndarray:
    """Joint target offset (rad) per unit of action, per actuated joint (policy order)."""
    return np.asarray(robot.action_scale, dtype=float)


def foot_geoms(robot: ResolvedRobot) -> set[int]:
    """Collision geoms of the feet: the resolved robot's foot geoms (geoms named as feet, picked by ``FootGeom``,
    or every collision geom of a foot body)."""
    if robot.foot_geom_ids:
        return {g for gs in robot.foot_geom_ids for g in gs}
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


def is_biped(robot: ResolvedRobot) -> bool:
    """Two feet: a robot that balances actively (it may not stand under zero actions at the gains its motors run)."""
    return robot.num_feet == 2


@dataclass(frozen=True)
class Standing:
    """Zero actions (targets at the default pose) for ``seconds``, after a drop from ``base_height``; with
    ``supported``, the base kept upright (free to sink: the legs carry the weight, balance is not theirs)."""

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
    foot_drift: dict[str, float] = field(default_factory=dict)
    """How far (m) each foot slid horizontally from 0.5 s to the end."""
    pose_error: dict[str, float] = field(default_factory=dict)
    """The POSE_ERRORS_LISTED driven joints (trained or held) furthest from their target over the last second:
    mean target - angle (rad), largest first."""
    supported: bool = False
    """The base was kept upright (``Sim.step_upright``)."""
    splay: dict[str, float] = field(default_factory=dict)
    """Each sideways joint (``Sim.sideways``: hip abduction / roll) over the last second: mean target - angle (rad)."""


@dataclass
class _Tally:
    """What ``standing`` accumulates step by step."""

    heights: list[float] = field(default_factory=list)
    tilts: list[float] = field(default_factory=list)
    contact_steps: dict[str, int] = field(default_factory=dict)
    q_sum: np.ndarray | None = None
    at_limit: np.ndarray | None = None
    saturated: np.ndarray | None = None
    peak: np.ndarray | None = None


class _Touching:
    """Which non-foot bodies of the robot touch anything that is not the robot, from the contact arrays (a Python
    loop over the contacts cost 0.4 ms a step, half of a standing trial)."""

    def __init__(self, model: mujoco.MjModel, feet: set[int], mine: set[int]):
        self.mine = np.isin(model.geom_bodyid, sorted(mine))
        """Per geom: it belongs to the robot."""
        self.counted = self.mine & ~np.isin(np.arange(model.ngeom), sorted(feet))
        """Per geom: a robot geom that is not a foot."""
        self.names = {int(g): mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g]) or str(g)
                      for g in np.flatnonzero(self.counted)}

    def __call__(self, d: mujoco.MjData) -> set[str]:
        if d.ncon == 0:
            return set()
        g1, g2 = d.contact.geom1[:d.ncon], d.contact.geom2[:d.ncon]
        hit = np.concatenate([g1[self.counted[g1] & ~self.mine[g2]], g2[self.counted[g2] & ~self.mine[g1]]])
        return {self.names[int(g)] for g in hit}


def _last_second(sim: Sim, t: _Tally) -> None:
    d = sim.data
    t.heights.append(sim.base_height)
    t.tilts.append(sim.tilt)
    q = d.qpos[sim.driven_qadr]
    n = len(q)
    t.q_sum = (t.q_sum if t.q_sum is not None else np.zeros(n)) + q
    at = sim.limited & ((q - sim.lo < LIMIT_MARGIN) | (sim.hi - q < LIMIT_MARGIN))
    t.at_limit = (t.at_limit if t.at_limit is not None else np.zeros(n)) + at
    share = np.abs(d.actuator_force[sim.driven_ctrl]) / sim.effort
    t.saturated = (t.saturated if t.saturated is not None else np.zeros(n)) + (share > SATURATED)
    t.peak = np.maximum(t.peak if t.peak is not None else np.zeros(n), share)


def standing(robot: ResolvedRobot, seconds: float = 4.0, supported: bool = False,
             model: mujoco.MjModel | None = None) -> Standing:
    """Zero actions for ``seconds`` (see ``Standing``); ``model``: another copy of the scene (solver settings)."""
    sim = Sim(robot, model)
    m, d = sim.model, sim.data
    steps = int(round(seconds / m.opt.timestep))
    last = steps - int(round(1.0 / m.opt.timestep))
    settle = int(round(0.5 / m.opt.timestep))
    touching = _Touching(m, foot_geoms(robot), robot_bodies(robot))
    t = _Tally()
    diverged_at = None
    feet_at_settle = sim.foot_xy()
    for k in range(steps):
        if supported:
            sim.step_upright()
        else:
            mujoco.mj_step(m, d)
        if diverged(m, d):
            diverged_at = (k + 1) * m.opt.timestep
            break
        if k == settle:
            feet_at_settle = sim.foot_xy()
        if k >= settle:
            for b in touching(d):
                t.contact_steps[b] = t.contact_steps.get(b, 0) + 1
        if k >= last:
            _last_second(sim, t)
    return _standing_result(sim, t, seconds, steps - settle, diverged_at, feet_at_settle, supported)


def _standing_result(sim: Sim, t: _Tally, seconds: float, n_contact: int, diverged_at: float | None,
                     feet_at_settle: np.ndarray, supported: bool) -> Standing:
    names = sim.driven_names
    n_last = max(len(t.heights), 1)
    per = {}
    pose_error: dict[str, float] = {}
    splay: dict[str, float] = {}
    if t.q_sum is not None and diverged_at is None:
        err = sim.driven_target - t.q_sum / n_last
        worst = np.argsort(-np.abs(err))[:POSE_ERRORS_LISTED]
        pose_error = {names[i]: round(float(err[i]), 4) for i in worst}
        splay = {names[i]: round(float(err[i]), 4) for i in sim.sideways}
        per = {"at_limit": t.at_limit, "saturation": t.saturated}
    drift = np.linalg.norm(sim.foot_xy() - feet_at_settle, axis=1) if diverged_at is None else []
    share = {k: {n: round(float(a) / n_last, 3) for n, a in zip(names, v, strict=True) if a > 0}
             for k, v in per.items() if v is not None}
    return Standing(
        seconds=seconds, base_height=float(np.mean(t.heights)) if t.heights else float("nan"),
        min_height=float(np.min(t.heights)) if t.heights else float("nan"),
        tilt=float(np.max(t.tilts)) if t.tilts else float("nan"), diverged_at=diverged_at,
        contacts={b: round(c / max(n_contact, 1), 3) for b, c in sorted(t.contact_steps.items())},
        at_limit=share.get("at_limit", {}), saturation=share.get("saturation", {}),
        peak_effort={n: round(float(p), 3) for n, p in zip(names, t.peak, strict=True)} if t.peak is not None else {},
        foot_drift={f: round(float(x), 4) for f, x in zip(sim.robot.foot_names, drift, strict=False)},
        pose_error=pose_error, supported=supported, splay=splay)
