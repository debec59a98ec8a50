"""Every joint of a robot file accounted for: trained (``joints``), held (``held``) or welded (``welded``); their
poses resolved and checked against the joints' ranges; welded joints removed from the MjSpec.

One-line ``UserError`` for each problem, naming the spec field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from contract.errors import UserError
from envs.robots.names import assign, match_each
from envs.robots.spec import HeldJoints, Pose, RobotSpec, WeldedJoints

RANGE_TOLERANCE = 1e-6
"""A pose may lie this far (rad or m) outside a joint's range (rounding in the file)."""
_HINGE_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@dataclass(frozen=True)
class JointPlan:
    """The file's non-free joints, sorted into trained, held and welded, with their poses."""

    trained: tuple[str, ...]
    """Trained joints, in policy order."""
    default_pose: tuple[float, ...]
    """Standing pose of the trained joints (policy order)."""
    held: tuple[str, ...]
    """Held joints (spec order, then file order)."""
    held_pose: tuple[float, ...]
    """Pose of each held joint."""
    welded: tuple[str, ...]
    """Welded joints (spec order, then file order)."""
    welded_pose: tuple[float, ...]
    """Pose of each welded joint."""


def _poses(robot: RobotSpec, field: str, pose: float | Pose, joints: list[str]) -> list[float]:
    if isinstance(pose, float):
        return [pose] * len(joints)
    keys = [k for k, _ in pose]
    return [pose[k][1] for k in assign(robot.name, field, keys, joints, f"{field} joints")]


def plan_joints(robot: RobotSpec, m0: mujoco.MjModel, joints: list[str]) -> JointPlan:
    """Sort every non-free joint of ``m0`` (names ``joints``, unnamed ones as ``joint<id>``); one-line errors."""
    name = robot.name
    movable = [j for j in range(m0.njnt) if int(m0.jnt_type[j]) in _HINGE_SLIDE]
    movable_names = [joints[j] for j in movable]
    nonfree = [j for j in range(m0.njnt) if m0.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE]
    nonfree_names = [joints[j] or f"joint{j}" for j in nonfree]
    trained = [movable_names[i] for i in match_each(name, "joints", robot.joints, movable_names, "hinge/slide joints")]
    pose_keys = [k for k, _ in robot.default_pose]
    default = [robot.default_pose[k][1] for k in assign(name, "default_pose", pose_keys, trained, "actuated joints")]
    taken = {j: "joints" for j in trained}
    where = {j: "default_pose" for j in trained}  # the field each joint's pose comes from
    held, held_pose = _take(robot, "held", robot.held, movable_names, "hinge/slide joints", taken, where)
    welded, welded_pose = _take(robot, "welded", robot.welded, nonfree_names, "non-free joints", taken, where)
    left = [j for j in nonfree_names if j not in taken]
    if left:
        raise UserError(f"robot spec '{name}' field joints / held / welded: {len(left)} joint"
                        f"{'s are' if len(left) > 1 else ' is'} neither trained, held nor welded: {', '.join(left)}; "
                        "add each to joints, held=(HeldJoints(...),) or welded=(WeldedJoints(...),)")
    for names, poses in ((trained, default), (held, held_pose), (welded, welded_pose)):
        for j, q in zip(names, poses, strict=True):
            _check_pose(robot, m0, nonfree[nonfree_names.index(j)], j, q, where[j])
    return JointPlan(tuple(trained), tuple(default), tuple(held), tuple(held_pose), tuple(welded),
                     tuple(welded_pose))


def _take(robot: RobotSpec, field: str, entries: Sequence[HeldJoints | WeldedJoints],
          candidates: list[str], what: str, taken: dict[str, str],
          where: dict[str, str]) -> tuple[list[str], list[float]]:
    """The joints of ``candidates`` that ``field``'s entries match, and their poses; each joint recorded in
    ``taken`` (the field that claims it) and ``where`` (the field its pose comes from)."""
    name = robot.name
    names: list[str] = []
    poses: list[float] = []
    for k, e in enumerate(entries):
        hits = [candidates[i] for i in match_each(name, f"{field}[{k}]", [e.joints], candidates, what)]
        for j in hits:
            if j in taken:
                raise UserError(f"robot spec '{name}' field {field}[{k}]: joint {j!r} is already "
                                f"{'trained' if taken[j] == 'joints' else taken[j]} (field {taken[j]}); a joint "
                                "is trained, held or welded, once")
            taken[j] = field
            where[j] = f"{field}[{k}].pose"
        names += hits
        poses += _poses(robot, f"{field}[{k}].pose", e.pose, hits)
    return names, poses


def _check_pose(robot: RobotSpec, m0: mujoco.MjModel, jid: int, joint: str, q: float, field: str) -> None:
    """Joint ``jid`` (named ``joint``) at ``q`` (from spec field ``field``) lies inside its range; a ball joint
    only at 0."""
    if m0.jnt_limited[jid] and not (m0.jnt_range[jid, 0] - RANGE_TOLERANCE <= q
                                    <= m0.jnt_range[jid, 1] + RANGE_TOLERANCE):
        lo, hi = m0.jnt_range[jid]
        raise UserError(f"robot spec '{robot.name}' field {field}: joint {joint!r} at {q:g} is outside its range "
                        f"[{lo:g}, {hi:g}] (the file's range, in rad or m)")
    if q != 0.0 and int(m0.jnt_type[jid]) not in _HINGE_SLIDE:
        raise UserError(f"robot spec '{robot.name}' field {field}: joint {joint!r} is a ball joint; it is welded at "
                        "pose 0 only")


def weld(rspec: mujoco.MjSpec, m0: mujoco.MjModel, plan: JointPlan, joints: list[str]) -> None:
    """Remove the welded joints from ``rspec``; a body welded at a non-zero pose is moved to it (rotated about
    the joint's axis through its anchor, or slid along it), joint after joint in the file's order, as MuJoCo's
    kinematics composes them (exact when a body's welded joints come before any joint it keeps)."""
    by_id = {j.id: j for j in rspec.joints}
    names = [joints[j] or f"joint{j}" for j in range(m0.njnt)]
    moved: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # body id -> its pose so far (several welds on one body)
    for jid, q in sorted((names.index(j), q) for j, q in zip(plan.welded, plan.welded_pose, strict=True)):  # file order
        joint = by_id[jid]
        if q != 0.0:
            body = joint.parent
            b = int(m0.jnt_bodyid[jid])
            pos, quat = moved.get(b, (np.array(m0.body_pos[b], dtype=float), np.array(m0.body_quat[b], dtype=float)))
            axis, anchor = np.array(m0.jnt_axis[jid], dtype=float), np.array(m0.jnt_pos[jid], dtype=float)
            rot = np.empty(9)
            mujoco.mju_quat2Mat(rot, quat)
            rot3 = rot.reshape(3, 3)
            angle = q - float(m0.qpos0[m0.jnt_qposadr[jid]])
            if m0.jnt_type[jid] == mujoco.mjtJoint.mjJNT_SLIDE:
                pos = pos + rot3 @ (axis * angle)
            else:
                turn = np.empty(4)
                mujoco.mju_axisAngle2Quat(turn, axis, angle)
                turn_mat = np.empty(9)
                mujoco.mju_quat2Mat(turn_mat, turn)
                pos = pos + rot3 @ (anchor - turn_mat.reshape(3, 3) @ anchor)
                new = np.empty(4)
                mujoco.mju_mulQuat(new, quat, turn)
                quat = new
            moved[b] = (pos, quat)
            body.alt.type = mujoco.mjtOrientation.mjORIENTATION_QUAT
            body.pos, body.quat = pos.tolist(), quat.tolist()
        rspec.delete(joint)

