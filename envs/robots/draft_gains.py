"""The drafted spec's actuator groups: per trained or held joint, its gains, effort limit and armature from the
robot file where it has them (position servos: kp, kv, force range; motors: the control range times the gear;
joints: the actuator force range and armature), the rest from the rules below; joints with the same values form
one group, named by a short regex.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import mujoco
import numpy as np

from envs.robots.patterns import covering_regex
from envs.robots.sides import twins
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
"""Without any actuator, force range or armature in the file, a leg joint's effort limit is guessed as the robot's
weight times this lever (m); a joint off the legs's as twice the weight of what it moves times its lever."""
EFFORT_PER_ARMATURE = (3630.0, 0.885)
"""Without an actuator or force range but with the file's armature J (kg m^2, the motor's reflected inertia), the
effort limit is guessed as a J^b (N m): the power law through mjlab's G1 motors (J 0.0036 -> 25 N m, 0.0251 -> 139
N m; it gives 46 for 50 and 62 for 88): one guess per motor size, never one for the whole robot."""
RULE_HZ = 10.0
"""Natural frequency (Hz) of mjlab's rule: a servo on a motor of reflected inertia J (the joint's armature) has kp =
J (2 pi RULE_HZ)^2 and kd = 2 RULE_DAMPING J (2 pi RULE_HZ)."""
RULE_DAMPING = 2.0
"""Damping ratio of mjlab's rule (against the armature alone: about 0.3 to 1 with the links' inertia)."""
LEGS_DAMPING = 1.0
"""A file without actuators: a trained joint's kd = 2 LEGS_DAMPING sqrt(kp J), J the file's armature (the motor's
reflected inertia), at kp = KP_PER_EFFORT x its effort limit: Unitree's own G1 RL gains (unitree_rl_gym's deploy
file: hips 100 / 2, knees 150 / 4, ankles 40 / 2) are 0.72-1.25 x their motors' effort limits and damp the
armature at ratios 0.99 (hips), 1.03 (knees) and 1.86 (ankles). On the G1-style test model these legs reached the
humanoid's tracking targets by name where mjlab's softer 10 Hz rule (``armature_rule``, the band's centre) did not
(docs/robots.md)."""
RULE_NOTE = "critically damped on the file's armature"
"""The note of a trained joint of a file without actuators drafted by LEGS_DAMPING."""
HOLD = 5.0
"""A held joint's drafted kp is at least HOLD x M g r, M the mass it carries (its body's subtree) and r the distance
from its anchor to that mass's centre at the pose (``carried_stiffness``: gravity's toppling stiffness): a tilt of
the base then bends the held chain by 1 / (HOLD - 1) of the tilt (kp d = M g r (tilt + d)). The makers' choice:
Unitree's G1 deploy file holds the waist at kp 150 (300 in its 12-joint variant), 4.3 to 5.4 x the waist's M g r
on the G1-style test model (27.7 N m/rad roll and pitch, 34.8 yaw: ``examples/g1_like``), 8.6 to 11 x at 300; 5
gives 138 and 174. Its arms (M g r 1.7 to 4.9) stay at 1 x their 25 N m motors. kd: see HOLD_DAMPING; the effort
limit the motor's."""
HOLD_DAMPING = 1.0
"""A held joint's drafted kd is at least 2 x HOLD_DAMPING x sqrt(kp I), I the inertia it carries about its axis at
the pose (its diagonal of the mass matrix, armature included: ``carried_inertia``): critically damped. At the draft's
kd = kp x KD_PER_KP (Unitree's held waist: 3 / 150) the G1-style model's waist, which carries 48% of the mass (I
0.77-0.85 kg m^2), rang at a damping ratio of 0.16, and its arms at 0.3: a wobble the policy neither observes (held
joints are not in the observation) nor drives. With the waist and arms welded instead, the by-name G1-style model's
yaw-rate error at training iteration 60 was 0.47 rad/s against 0.76 (docs/robots.md)."""


class _File(Protocol):
    @property
    def model(self) -> mujoco.MjModel: ...

    @property
    def data(self) -> mujoco.MjData: ...

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


def carried_stiffness(m: mujoco.MjModel, d: mujoco.MjData, j: int) -> float:
    """Gravity's toppling stiffness M g r (N m / rad) of joint ``j`` at ``d``'s pose (``HOLD``): the full distance
    from its anchor to the centre of the mass it carries, whatever its axis (a yaw joint tilted with the base
    carries that mass too: Unitree holds the G1's waist yaw as its roll and pitch)."""
    body = int(m.jnt_bodyid[j])
    lever = float(np.linalg.norm(d.subtree_com[body] - d.xanchor[j]))
    return float(m.body_subtreemass[body]) * float(np.linalg.norm(m.opt.gravity)) * lever


def carried_inertia(m: mujoco.MjModel, d: mujoco.MjData, j: int) -> float:
    """The inertia (kg m^2) joint ``j`` moves about its axis at ``d``'s pose (``HOLD_DAMPING``): its diagonal entry of
    the joint-space mass matrix (the bodies it carries, the armature included); ``d`` must have had ``mj_forward``."""
    i = int(m.jnt_dofadr[j])
    unit, out = np.zeros(m.nv), np.zeros(m.nv)
    unit[i] = 1.0
    mujoco.mj_mulM(m, d, out, unit)
    return float(out[i])


def armature_rule(armature: float) -> tuple[float, float]:
    """(kp, kd) of mjlab's rule (RULE_HZ, RULE_DAMPING) for a joint of reflected inertia ``armature`` (kg m^2)."""
    w = 2 * np.pi * RULE_HZ
    return float(armature * w * w), float(2 * RULE_DAMPING * armature * w)


def _held(f: _File, name: str, values: tuple[float, float, float, float | None, str]
          ) -> tuple[float, float, float, float | None, str]:
    """A held joint's values with kp raised to HOLD x M g r where that is above them (kd = kp x KD_PER_KP)."""
    kp, kd, effort, armature, note = values
    carried = carried_stiffness(f.model, f.data, f.joints.index(name))
    hold = _three(HOLD * carried)
    if hold <= kp:
        return values
    return (hold, hold * KD_PER_KP, effort, armature,
            f"{note}; kp raised from {_three(kp):g} to {HOLD:g} x M g r {_three(carried)} N m/rad (the weight it "
            f"carries x its lever: a soft held joint folds under it), kd = kp x {KD_PER_KP:g}")


def _damped(values: tuple[float, float, float, float | None, str], inertia: float
            ) -> tuple[float, float, float, float | None, str]:
    """Held values with kd raised to critical damping of ``inertia`` (plus a drafted armature) where that is above
    it (HOLD_DAMPING)."""
    kp, kd, effort, armature, note = values
    inertia += armature or 0.0
    damped = _three(2.0 * HOLD_DAMPING * float(np.sqrt(kp * inertia)))
    if damped <= kd:
        return values
    return (kp, damped, effort, armature,
            f"{note}; kd raised from {_three(kd):g} to {damped:g}: damping ratio {HOLD_DAMPING:g} for the "
            f"{_three(inertia)} kg m^2 it carries (a held joint is not observed: it must not ring)")


def _joint(f: _File, name: str, held: bool) -> tuple[float, float, float, float | None, str]:
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
        effort, how = joint_range, "from the joint's actuator force range"
    else:
        effort, how = _guessed_effort(m, f.data, j, held)
        how = f"guessed {how} (check the motor's datasheet)"
    if not m.nu and not held and armature is None:
        kp = KP_PER_EFFORT * effort
        kd = 2.0 * LEGS_DAMPING * float(np.sqrt(kp * m.dof_armature[m.jnt_dofadr[j]]))
        return (kp, kd, effort, None,
                f"no actuator in the file: kp = {KP_PER_EFFORT:g} x effort limit, kd {RULE_NOTE} (damping ratio "
                f"{LEGS_DAMPING:g}: Unitree's G1 RL gains); effort limit {how}")
    return (KP_PER_EFFORT * effort, KP_PER_EFFORT * effort * KD_PER_KP, effort, armature,
            f"{'missing actuator' if m.nu else 'no actuator in the file'}: effort limit {how}; kp = "
            f"{KP_PER_EFFORT:g} x effort limit, kd = kp x {KD_PER_KP:g}; {arm_note}")


def _guessed_effort(m: mujoco.MjModel, d: mujoco.MjData, j: int, held: bool) -> tuple[float, str]:
    """(effort limit, how) of a joint the file says nothing about but perhaps its armature (EFFORT_PER_ARMATURE,
    MASS_LEVER)."""
    armature = float(m.dof_armature[m.jnt_dofadr[j]])
    if armature > 0:
        a, b = EFFORT_PER_ARMATURE
        return _three(a * armature ** b), f"from the file's armature {armature:.3g} (motor size)"
    if not held:
        return _three(float(sum(m.body_mass)) * 9.81 * MASS_LEVER), f"as the robot's weight x {MASS_LEVER} m"
    body = int(m.jnt_bodyid[j])
    lever = max(float(np.linalg.norm(d.subtree_com[body] - d.xanchor[j])), 0.05)
    return _three(2 * float(m.body_subtreemass[body]) * 9.81 * lever), "as twice the weight it moves x its lever"


def draft_groups(f: _File, trained: list[str], held: list[str]) -> tuple[DraftGroup, ...]:
    """Trained, then held joints with the same values in one group each (file order of first appearance)."""
    driven = trained + held
    values = {name: _joint(f, name, name in held) for name in driven}
    for name, twin_name in zip(driven, twins(driven), strict=True):
        if values[name][4].startswith("missing actuator") and not values[twin_name][4].startswith("missing"):
            kp, kd, effort, armature, _ = values[twin_name]
            values[name] = (kp, kd, effort, armature, f"missing actuator: the file has none on this joint; its twin "
                                                      f"{twin_name}'s values")
    values.update({name: _held(f, name, values[name]) for name in held})
    alike: dict[tuple, list[str]] = {}  # held joints with the same values: damped for the largest inertia of them
    for name in held:
        alike.setdefault(values[name], []).append(name)
    for same, names in alike.items():
        inertia = max(carried_inertia(f.model, f.data, f.joints.index(n)) for n in names)
        values.update({n: _damped(same, inertia) for n in names})
    keys: dict[tuple, list[str]] = {}
    for name in driven:
        kp, kd, effort, armature, note = values[name]
        key = (_three(kp), _three(kd), _three(effort), armature, note, name in held)
        keys.setdefault(key, []).append(name)
    out = []
    for (kp, kd, effort, armature, note, is_held), members in keys.items():
        group = ActuatorGroup(covering_regex(members, driven), kp=kp, kd=kd, effort_limit=effort, armature=armature)
        out.append(DraftGroup(group, note, is_held))
    return tuple(out)
