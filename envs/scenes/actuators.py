"""The robot's actuators at assembly: position servos per ActuatorGroup on the trained and held joints (the
file's actuators removed) or the file's own position actuators (``actuators="file"``), the groups' joint
properties (armature, damping, friction loss) written onto the joints, and per-joint action scales.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import mujoco

from envs.robots.names import assign, spec_error
from envs.robots.spec import (
    EFFORT_SCALE,
    EFFORT_SCALE_FACTOR,
    FILE_ACTUATORS,
    ActuatorGroup,
    JointProperties,
    RobotSpec,
)
from envs.scenes.joints import JointPlan


@dataclass(frozen=True)
class Actuation:
    """Per trained joint (policy order): gains, limits and action scale; and the ctrl layout."""

    kp: tuple[float, ...]
    kd: tuple[float, ...]
    effort_limit: tuple[float, ...]
    action_scale: tuple[float, ...]
    velocity_limit: tuple[float, ...]
    ctrl_source: tuple[int, ...]
    """For each actuator in model order: the policy index of the trained joint it drives (0..J-1), or J + h for
    the h-th held joint."""


def _scale(robot: RobotSpec, g: ActuatorGroup) -> float:
    if g.action_scale is None:
        assert robot.action_scale is not None  # envs/robots/checks.py: None only when every group sets its own
        return robot.action_scale
    if g.action_scale == EFFORT_SCALE:
        return EFFORT_SCALE_FACTOR * g.effort_limit / g.kp
    return float(g.action_scale)


def _set_first(values: object, value: float) -> list[float]:
    out = [float(v) for v in values]  # type: ignore[attr-defined]
    out[0] = value
    return out


def actuate(robot: RobotSpec, rspec: mujoco.MjSpec, m0: mujoco.MjModel, plan: JointPlan,
            joints: list[str]) -> Actuation:
    """Create (or check) the position actuators of the trained and held joints, then write the joint properties
    (the groups' and ``joint_properties``); one-line errors."""
    if robot.actuators == FILE_ACTUATORS:
        out = _file_actuators(robot, rspec, m0, plan, joints)
    else:
        out = _servos(robot, rspec, plan)
    _joint_properties(robot, rspec, plan)
    return out


def _joint_properties(robot: RobotSpec, rspec: mujoco.MjSpec, plan: JointPlan) -> None:
    """Armature, damping and friction loss of the actuator groups and of ``joint_properties`` onto the joints; a
    property set twice for one joint (two entries, or an entry and a group) is a one-line error."""
    driven = list(plan.trained) + list(plan.held)
    setters: list[tuple[str, str, JointProperties | ActuatorGroup]] = []
    if robot.actuators != FILE_ACTUATORS:
        assert not isinstance(robot.actuators, str)
        setters += [(f"actuators[{k}]", g.joints, g) for k, g in enumerate(robot.actuators)]
    props = robot.joint_properties
    setters += [(f"joint_properties[{k}]", jp.joints, jp) for k, jp in enumerate(props)]
    for k, jp in enumerate(props):
        if not any(re.fullmatch(jp.joints, j) for j in driven):
            raise spec_error(robot.name, f"joint_properties[{k}]", f"{jp.joints!r} matches no joint", driven,
                             "trained and held joints")
    done: dict[tuple[str, str], str] = {}
    for where, pattern, s in setters:
        for j in driven:
            if not re.fullmatch(pattern, j):
                continue
            joint = rspec.joint(j)
            for prop in ("armature", "damping", "frictionloss"):
                value = getattr(s, prop)
                if value is None:
                    continue
                if (j, prop) in done:
                    raise spec_error(robot.name, where, f"{prop} of joint {j!r} is set twice (also by "
                                     f"{done[(j, prop)]}): set it in one place", driven, "trained and held joints")
                done[(j, prop)] = where
                if prop == "damping":
                    joint.damping = _set_first(joint.damping, value)
                else:
                    setattr(joint, prop, value)


def _servos(robot: RobotSpec, rspec: mujoco.MjSpec, plan: JointPlan) -> Actuation:
    """Position servos of the actuator groups on the trained and held joints (the file's actuators removed)."""
    name = robot.name
    groups = robot.actuators
    assert not isinstance(groups, str)  # FILE_ACTUATORS returned above
    driven = list(plan.trained) + list(plan.held)
    group_of = assign(name, "actuators", [g.joints for g in groups], driven, "trained and held joints")
    for a in list(rspec.actuators):
        rspec.delete(a)
    for j, k in zip(driven, group_of, strict=True):
        g = groups[k]
        act = rspec.add_actuator(name=j, target=j, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = g.kp
        act.biasprm[0:3] = [0.0, -g.kp, -g.kd]
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-g.effort_limit, g.effort_limit]
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
    trained = [groups[k] for k in group_of[:len(plan.trained)]]
    return Actuation(tuple(g.kp for g in trained), tuple(g.kd for g in trained),
                     tuple(g.effort_limit for g in trained), tuple(_scale(robot, g) for g in trained),
                     tuple(g.velocity_limit if g.velocity_limit is not None else math.inf for g in trained),
                     tuple(range(len(driven))))


def _file_actuators(robot: RobotSpec, rspec: mujoco.MjSpec, m0: mujoco.MjModel, plan: JointPlan,
                    joints: list[str]) -> Actuation:
    """The file's position actuators: exactly one per trained or held joint; those of welded joints removed."""
    name = robot.name
    welded = set(plan.welded)
    by_joint: dict[str, list[int]] = {}
    for a in range(m0.nu):
        if m0.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT:
            by_joint.setdefault(joints[m0.actuator_trnid[a, 0]], []).append(a)
    driven = list(plan.trained) + list(plan.held)
    kp, kd, effort, source = [], [], [], {}
    for i, j in enumerate(driven):
        acts = by_joint.get(j, [])
        ok = len(acts) == 1 and m0.actuator_biastype[acts[0]] == mujoco.mjtBias.mjBIAS_AFFINE and math.isclose(
            m0.actuator_biasprm[acts[0], 1], -m0.actuator_gainprm[acts[0], 0])
        if not ok:
            have = [f"{mujoco.mj_id2name(m0, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or a}->{joints[m0.actuator_trnid[a, 0]]}"
                    for a in range(m0.nu)]
            motor = len(acts) == 1 and m0.actuator_biastype[acts[0]] == mujoco.mjtBias.mjBIAS_NONE
            why = (f": its actuator {mujoco.mj_id2name(m0, mujoco.mjtObj.mjOBJ_ACTUATOR, acts[0]) or acts[0]!r} is a "
                   "motor (torque), not a position servo; give actuators a tuple of ActuatorGroup (kp, kd, "
                   "effort_limit: python -m tools.new_robot drafts them)" if motor else "")
            raise spec_error(name, "actuators", f"'file' needs one position actuator on joint {j!r}{why}", have,
                             "actuators")
        a = acts[0]
        source[a] = i
        kp.append(float(m0.actuator_gainprm[a, 0]))
        kd.append(0.0 - float(m0.actuator_biasprm[a, 2]))  # 0.0 - x: a file without kv gives 0, not -0
        lim = m0.actuator_forcerange[a] if m0.actuator_forcelimited[a] else (-math.inf, math.inf)
        effort.append(float(max(abs(lim[0]), abs(lim[1]))))
    on_welded = [a for a in range(m0.nu) if a not in source and m0.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                 and joints[m0.actuator_trnid[a, 0]] in welded]
    extra = [a for a in range(m0.nu) if a not in source and a not in on_welded]
    if extra:
        listed = ", ".join(mujoco.mj_id2name(m0, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or str(a) for a in extra)
        raise spec_error(name, "actuators", f"'file': actuators {listed} drive no trained or held joint", driven,
                         "trained and held joints")
    spec_acts = {x.id: x for x in rspec.actuators}
    for a in on_welded:
        rspec.delete(spec_acts[a])
    J = len(plan.trained)
    assert robot.action_scale is not None  # envs/robots/checks.py: required with actuators="file"
    return Actuation(tuple(kp[:J]), tuple(kd[:J]), tuple(effort[:J]), (robot.action_scale,) * J,
                     (math.inf,) * J, tuple(source[a] for a in sorted(source)))
