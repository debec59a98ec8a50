"""The drafted spec's actuator groups: per trained or held joint, its gains, effort limit and armature from the
robot file where it has them (position servos: kp, kv, force range; motors: the control range times the gear;
joints: the actuator force range and armature), the rest from the rules below; joints with the same values form
one group, named by a short regex.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import mujoco

from envs.robots.patterns import covering_regex
from envs.robots.spec import ActuatorGroup

KP_PER_EFFORT = 1.0
"""Drafted kp (N m / rad) per N m of effort limit where the file gives no kp (motors): Unitree's and ANYbotics' own
gains are about 1 x the motor's torque limit; ``check_robot --fix`` adjusts it."""
KD_PER_KP = 1.0 / 40.0
"""Drafted kd per kp where the file gives none (kd / kp of Unitree's and ANYbotics' own gains: 0.5 / 20, 2 / 80)."""
ARMATURE = 0.01
"""Armature (kg m^2) drafted for joints the file gives none (training frameworks add the motor's reflected inertia;
without any, a light limb under a stiff servo diverges)."""
MASS_LEVER = 0.1
"""Without any actuator or force range in the file, the effort limit is guessed as the robot's weight times this
lever (m)."""


class _File(Protocol):
    @property
    def model(self) -> mujoco.MjModel: ...

    @property
    def joints(self) -> list[str]: ...


@dataclass(frozen=True)
class DraftGroup:
    """One drafted actuator group and where its values came from."""

    group: ActuatorGroup
    note: str
    held: bool


def _three(x: float) -> float:
    return float(f"{x:.3g}")


def _joint(f: _File, name: str) -> tuple[float, float, float, float | None, str]:
    """(kp, kd, effort limit, armature or None to keep the file's, where they came from) of one joint."""
    m = f.model
    j = f.joints.index(name)
    acts = [a for a in range(m.nu)
            if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and m.actuator_trnid[a, 0] == j]
    armature = None if m.dof_armature[m.jnt_dofadr[j]] > 0 else ARMATURE
    arm_note = "armature: the file's" if armature is None else f"armature {ARMATURE} (the file has none)"
    joint_range = float(abs(m.jnt_actfrcrange[j]).max()) if m.jnt_actfrclimited[j] else 0.0
    if acts:
        a = acts[0]
        gain = float(m.actuator_gainprm[a, 0])
        servo = (m.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE
                 and abs(m.actuator_biasprm[a, 1] + gain) < 1e-9 * max(1.0, gain))
        if m.actuator_forcelimited[a]:
            effort, where = float(abs(m.actuator_forcerange[a]).max()), "its force range"
        elif not servo and m.actuator_ctrllimited[a]:
            effort, where = float(abs(m.actuator_ctrlrange[a]).max() * abs(m.actuator_gear[a, 0])), "its control range"
        elif joint_range:
            effort, where = joint_range, "the joint's actuator force range"
        else:
            effort, where = 0.0, ""
        if servo:
            kp, kd = float(m.actuator_gainprm[a, 0]), 0.0 - float(m.actuator_biasprm[a, 2])
            kd_note = "kv" if kd > 0 else f"no kv: kd = kp x {KD_PER_KP:g}"
            if kd <= 0:
                kd = kp * KD_PER_KP
            effort = effort or kp
            return kp, kd, effort, armature, (f"the file's position servos (kp, {kd_note}; effort limit from "
                                              f"{where or 'kp x 1 rad: no force range'}); {arm_note}")
        if effort:
            return (KP_PER_EFFORT * effort, KP_PER_EFFORT * effort * KD_PER_KP, effort, armature,
                    f"the file's motors (effort limit from {where}); kp = {KP_PER_EFFORT:g} x effort limit, kd = kp x "
                    f"{KD_PER_KP:g}; {arm_note}")
    if joint_range:
        return (KP_PER_EFFORT * joint_range, KP_PER_EFFORT * joint_range * KD_PER_KP, joint_range, armature,
                f"no actuator in the file: effort limit from the joint's actuator force range; kp = "
                f"{KP_PER_EFFORT:g} x effort limit, kd = kp x {KD_PER_KP:g}; {arm_note}")
    mass = float(sum(m.body_mass)) * 9.81 * MASS_LEVER
    return (KP_PER_EFFORT * mass, KP_PER_EFFORT * mass * KD_PER_KP, mass, armature,
            f"nothing in the file: effort limit guessed as the robot's weight x {MASS_LEVER} m (check the motor's "
            f"datasheet); kp = {KP_PER_EFFORT:g} x effort limit, kd = kp x {KD_PER_KP:g}; {arm_note}")


def draft_groups(f: _File, trained: list[str], held: list[str]) -> tuple[DraftGroup, ...]:
    """Trained, then held joints with the same values in one group each (file order of first appearance)."""
    driven = trained + held
    keys: dict[tuple, list[str]] = {}
    for name in driven:
        kp, kd, effort, armature, note = _joint(f, name)
        key = (_three(kp), _three(kd), _three(effort), armature, note, name in held)
        keys.setdefault(key, []).append(name)
    out = []
    for (kp, kd, effort, armature, note, is_held), members in keys.items():
        group = ActuatorGroup(covering_regex(members, driven), kp=kp, kd=kd, effort_limit=effort, armature=armature)
        out.append(DraftGroup(group, note, is_held))
    return tuple(out)
