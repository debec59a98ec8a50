"""The robot check's servo trial: a PD step response per actuator group, trained and held groups alike, the base
held in the air; each joint stepped by one unit of action (held joints: HELD_STEP) but never further than
STEP_ROOM of its room to the range's end, and each group's damping ratio from the joints' inertia.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import mujoco
import numpy as np

from envs.robot_check.trials import CAP, Sim, action_scale
from envs.robots.draft_gains import carried_stiffness
from envs.robots.resolved import ResolvedRobot

HELD_STEP = 0.25
"""Step (rad) of a held joint's response (held joints have no action scale)."""
STEP_ROOM = 0.8
"""A step goes at most this share of the way from the default pose to the joint's range end."""


@dataclass(frozen=True)
class StepResponse:
    """One actuator group's joints stepped together, the base held in the air (worst joint)."""

    group: str
    joints: tuple[str, ...]
    kp: float
    kd: float
    step: float
    """The smallest step of the group's joints (rad)."""
    rise_time: float
    """10% to 90% of the step (s); inf when it never gets there."""
    overshoot: float
    """Largest excursion past the target, as a share of the step."""
    steady_state_error: float
    """|target - angle| after ``hold`` seconds, as a share of the step."""
    final_speed: float = 0.0
    """Largest joint speed (rad/s) over the last 0.1 s of the hold: a servo that still moves there oscillates."""
    damping_ratio: float = 0.0
    """Smallest (kd + joint damping) / (2 sqrt(kp x inertia)) of the group's joints, the inertia being the joint's
    diagonal of the mass matrix (armature included) at the default pose, base held."""
    inertia: float = 0.0
    """That joint's inertia (kg m^2)."""
    held: bool = False
    """The group's joints are held (outside the action space)."""
    step_limited: bool = False
    """A joint's step was cut to STEP_ROOM of its room to the range's end."""
    joint_damping: float = 0.0
    """The joint damping (N m s / rad) of the worst joint (the robot file's, or the group's): counted in the
    damping ratio, named in the advice."""
    frictionloss: float = 0.0
    """The friction loss (N m) of the worst joint."""
    armature: float = 0.0
    """The largest armature (kg m^2) among the group's joints: the band's rule (``band.py``)."""
    effort: float = 0.0
    """The group's effort limit (N m; inf: none)."""
    from_file: bool = False
    """The gains are the robot file's own servos' (``actuators="file"``), not set by the spec."""
    carried: float = 0.0
    """A held group's largest gravity toppling stiffness M g r (N m / rad) at the default pose (``draft_gains.
    carried_stiffness``): its band reaches up to HOLD x that (``band.held``); 0 for a trained group."""

    def kd_alone(self) -> float:
        """The damping ratio the joint damping alone gives (kd 0)."""
        return self.joint_damping / (2.0 * math.sqrt(max(self.kp, 1e-9) * max(self.inertia, 1e-12)))


@dataclass(frozen=True)
class Group:
    """One actuator group: its label and its driven joints' indices (trained ones first, then held; ``Sim``)."""

    label: str
    members: tuple[int, ...]
    held: bool


def groups(robot: ResolvedRobot) -> list[Group]:
    """The actuator groups: the spec's ``ActuatorGroup`` regexes split into their trained and held joints, or
    the file's actuators grouped by identical gains."""
    names = tuple(robot.joint_names) + tuple(robot.held_joint_names)
    n = robot.num_joints
    spec_groups = robot.spec.actuators
    out: list[Group] = []
    if not isinstance(spec_groups, str):
        for g in spec_groups:
            members = [i for i, name in enumerate(names) if re.fullmatch(g.joints, name)]
            trained = tuple(i for i in members if i < n)
            held = tuple(i for i in members if i >= n)
            if trained:
                out.append(Group(g.joints, trained, False))
            if held:
                out.append(Group(g.joints + " (held)", held, True))
        return out
    sim = Sim(robot)
    m = robot.model
    by_gain: dict[tuple[float, float, float, bool], list[int]] = {}
    for i, a in enumerate(sim.driven_ctrl):
        key = (float(m.actuator_gainprm[a, 0]), 0.0 - float(m.actuator_biasprm[a, 2]), float(sim.effort[i]), i >= n)
        by_gain.setdefault(key, []).append(i)
    return [Group(f"kp {k[0]:g} kd {k[1]:g} limit {k[2]:g}" + (" (held)" if k[3] else ""), tuple(v), k[3])
            for k, v in by_gain.items()]


def _steps(sim: Sim, group: Group, scale: np.ndarray) -> tuple[np.ndarray, bool]:
    """Signed step per member (away from the nearer limit, within STEP_ROOM of the room); whether one was cut."""
    idx = np.array(group.members)
    base = np.where(idx < len(scale), scale[np.minimum(idx, len(scale) - 1)], HELD_STEP)
    target = sim.driven_target[idx]
    lo, hi, limited = sim.lo[idx], sim.hi[idx], sim.limited[idx]
    up = np.where(limited, hi - target >= target - lo, True)
    room = np.where(limited, np.where(up, hi - target, target - lo), np.inf)
    size = np.minimum(base, STEP_ROOM * room)
    return np.where(up, 1.0, -1.0) * size, bool(np.any(size < base - 1e-9))


def damping(sim: Sim, members: tuple[int, ...]) -> tuple[float, float, float, float]:
    """(smallest damping ratio, that joint's inertia, its kp, its kd) of ``members`` at the current state."""
    m, d = sim.model, sim.data
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    best = (math.inf, 0.0, 0.0, 0.0)
    for i in members:
        a, dof = int(sim.driven_ctrl[i]), int(sim.driven_dadr[i])
        kp, kd = float(m.actuator_gainprm[a, 0]), 0.0 - float(m.actuator_biasprm[a, 2])
        inertia = float(full[dof, dof])
        ratio = (kd + float(m.dof_damping[dof])) / (2.0 * math.sqrt(max(kp, 1e-9) * max(inertia, 1e-12)))
        if ratio < best[0]:
            best = (ratio, inertia, kp, kd)
    return best


def step_response(robot: ResolvedRobot, settle: float = 0.3, hold: float = 0.5) -> list[StepResponse]:
    """Each group in turn: the base held 0.5 m above its reset height, the group's targets stepped (``_steps``),
    the other joints at their pose."""
    out = []
    dt = robot.model.opt.timestep
    scale = action_scale(robot)
    for group in groups(robot):
        sim = Sim(robot)
        d = sim.data
        sim.reset(robot.spec.base_height + 0.5)
        carried = _carried(sim, group)
        for _ in range(int(round(settle / dt))):
            sim.step_held()
        ratio, inertia, kp, kd = damping(sim, group.members)
        worst = _worst_dof(sim, group.members, ratio)
        idx = np.array(group.members)
        start = d.qpos[sim.driven_qadr[idx]].copy()
        size, limited = _steps(sim, group, scale)
        targets = sim.driven_target.copy()
        targets[idx] += size
        sim.set_driven(targets)
        trace, speeds = [], []
        for _ in range(int(round(hold / dt))):
            sim.step_held()
            trace.append(d.qpos[sim.driven_qadr[idx]].copy())
            speeds.append(float(np.abs(d.qvel[sim.driven_dadr[idx]]).max()))
        resp = _response(group, sim, np.array(trace), start, targets[idx], size, speeds, dt, ratio, inertia, kp, kd,
                         limited)
        m = robot.model
        out.append(dataclasses.replace(
            resp, joint_damping=float(m.dof_damping[worst]), frictionloss=float(m.dof_frictionloss[worst]),
            armature=float(max(m.dof_armature[sim.driven_dadr[i]] for i in group.members)),
            effort=float(max(sim.effort[i] for i in group.members)),
            from_file=isinstance(robot.spec.actuators, str), carried=carried))
    return out


def _carried(sim: Sim, group: Group) -> float:
    """A held group's largest M g r at the pose ``sim`` was just reset to (0 for a trained group)."""
    if not group.held:
        return 0.0
    m = sim.model
    return round(max(carried_stiffness(m, sim.data, m.joint(sim.driven_names[i]).id) for i in group.members), 3)


def _worst_dof(sim: Sim, members: tuple[int, ...], ratio: float) -> int:
    """The dof of the member whose damping ratio is ``ratio`` (the group's worst)."""
    for i in members:
        if damping(sim, (i,))[0] == ratio:
            return int(sim.driven_dadr[i])
    return int(sim.driven_dadr[members[0]])


def _response(group: Group, sim: Sim, y: np.ndarray, start: np.ndarray, target: np.ndarray, size: np.ndarray,
              speeds: list[float], dt: float, ratio: float, inertia: float, kp: float, kd: float,
              limited: bool) -> StepResponse:
    progress = (y - start) / (target - start)
    rises, overs, errors = [], [], []
    for j in range(y.shape[1]):
        p = progress[:, j]
        t10 = np.flatnonzero(p >= 0.1)
        t90 = np.flatnonzero(p >= 0.9)
        rises.append((t90[0] - t10[0]) * dt if len(t10) and len(t90) else math.inf)
        overs.append(max(0.0, float(p.max()) - 1.0))
        errors.append(abs(float(target[j] - y[-1, j])) / abs(float(size[j])))

    def capped(x: float) -> float:
        return round(min(float(np.nan_to_num(x, nan=CAP)), CAP), 3)

    return StepResponse(group=group.label, joints=tuple(sim.driven_names[i] for i in group.members), kp=kp, kd=kd,
                        step=float(np.abs(size).min()), rise_time=float(max(rises)), overshoot=capped(max(overs)),
                        steady_state_error=capped(max(errors)),
                        final_speed=capped(max(speeds[-int(round(0.1 / dt)):])),
                        damping_ratio=round(ratio, 3), inertia=round(inertia, 6), held=group.held,
                        step_limited=limited)
