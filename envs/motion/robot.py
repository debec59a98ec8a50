"""The robot a clip drives: its file's every joint trained (held joints become trained ones, at their held pose as
their default; welded joints stay welded unless released: ``release`` names welded joints a clip moves, which then
become trained ones at their welded pose), put into the scene by ``envs/scenes/assemble.py``.

The tracking spec's ``default_pose`` names every trained joint exactly (one entry per joint, resolved against the
file's joint names): a spec's broad entries (a draft's ``".*": 0.0``) would otherwise also match the held and
released joints, each already given its own pose.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Literal

import mujoco
import numpy as np

from contract.errors import UserError
from contract.motion import Clip
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import ActuatorGroup, Pose, RobotSpec, WeldedJoints
from envs.scenes.assemble import build
from envs.scenes.options import PLAIN, SceneOptions

_FREE, _BALL = mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL


def _load(mjcf: Path | str) -> mujoco.MjModel:
    try:
        return mujoco.MjModel.from_xml_path(str(mjcf))
    except ValueError as e:
        raise UserError(f"robot file {mjcf}: MuJoCo cannot load it ({' '.join(str(e).split())[:120]})") from None


def _names(m: mujoco.MjModel) -> tuple[str, ...]:
    return tuple(m.joint(j).name for j in range(m.njnt) if int(m.jnt_type[j]) not in (int(_FREE), int(_BALL)))


def file_joints(mjcf: Path | str) -> tuple[str, ...]:
    """The hinge and slide joints of a robot file, in its order (what the columns of a LAFAN1 CSV or an mjlab
    motion are: welded joints included)."""
    return _names(_load(mjcf))


def matching(pattern: str, names: tuple[str, ...]) -> list[str]:
    """``names`` that ``pattern`` matches whole, in their order."""
    return [n for n in names if re.fullmatch(pattern, n)]


def _angle(name: str, pose: float | Pose, where: str) -> float:
    if isinstance(pose, float):
        return pose
    hits = [v for k, v in pose if re.fullmatch(k, name)]
    if len(hits) != 1:
        raise UserError(f"{where}: joint {name!r} is matched by {len(hits)} entries; each joint needs exactly one")
    return hits[0]


def welded_names(spec: RobotSpec, names: tuple[str, ...]) -> dict[str, float]:
    """The joints ``spec`` welds among the file's ``names``, with their welded angle."""
    return {n: _angle(n, w.pose, f"robot {spec.name}: welded {w.joints!r} pose")
            for w in spec.welded for n in matching(w.joints, names)}


MOVE_TOL = 1e-3
"""A welded joint's clip column within this of its welded angle (rad) is held there: the clip does not move it."""


def moved_welded(clip: Clip, welded: dict[str, float]) -> list[str]:
    """The joints among ``welded`` (name -> welded angle) that ``clip`` moves away from their welded angle."""
    return [n for k, n in enumerate(clip.joint_names)
            if n in welded and float(np.abs(clip.joint_pos[:, k] - welded[n]).max()) > MOVE_TOL]


def drop_welded(clip: Clip, welded: dict[str, float]) -> Clip:
    """``clip`` without the columns of the ``welded`` joints (a file's clip names every joint, welded ones too)."""
    keep = [k for k, n in enumerate(clip.joint_names) if n not in welded]
    if len(keep) == len(clip.joint_names):
        return clip
    return dataclasses.replace(clip, joint_names=tuple(clip.joint_names[k] for k in keep),
                               joint_pos=clip.joint_pos[:, keep])


def every_joint_trained(spec: RobotSpec, release: tuple[str, ...] = ()) -> RobotSpec:
    """``spec`` with its held joints and the welded joints named in ``release`` moved into ``joints`` (after the
    trained ones), their held / welded pose their default (module docstring)."""
    if not spec.held and not release:
        return spec
    model = _load(spec.mjcf)
    names = _names(model)
    welded = welded_names(spec, names)
    unknown = [n for n in release if n not in welded]
    if unknown:
        raise UserError(f"robot {spec.name}: cannot release {', '.join(unknown)}: not welded by its spec "
                        f"(welded: {', '.join(welded) or '(none)'})")
    pose: dict[str, float] = {}
    for pattern in spec.joints:
        for n in matching(pattern, names):
            pose.setdefault(n, _angle(n, spec.default_pose, f"robot {spec.name}: default_pose"))
    for held in spec.held:
        for n in matching(held.joints, names):
            pose.setdefault(n, _angle(n, held.pose, f"robot {spec.name}: held {held.joints!r} pose"))
    for n in release:
        pose.setdefault(n, welded[n])
    kept = tuple(WeldedJoints(re.escape(n), v) for n, v in welded.items() if n not in release)
    joints = spec.joints + tuple(h.joints for h in spec.held) + tuple(re.escape(n) for n in release)
    return dataclasses.replace(spec, actuators=_with_groups(spec, release, model), joints=joints,
                               default_pose=tuple((re.escape(n), v) for n, v in pose.items()), held=(), welded=kept)


def _with_groups(spec: RobotSpec, release: tuple[str, ...],
                 model: mujoco.MjModel) -> tuple[ActuatorGroup, ...] | Literal["file"]:
    """``spec``'s actuator groups plus, for each released joint none of them drives, a copy of the group of its
    nearest ancestor joint that has one (a wrist gets its elbow's gains)."""
    groups = spec.actuators
    if isinstance(groups, str):
        return groups
    extra = []
    for n in release:
        if any(re.fullmatch(g.joints, n) for g in groups):
            continue
        body, found = int(model.jnt_bodyid[model.joint(n).id]), None
        while found is None and body > 0:
            body = int(model.body_parentid[body])
            on_body = [j for j in range(model.njnt) if model.jnt_bodyid[j] == body][::-1]
            found = next((g for j in on_body for g in groups if re.fullmatch(g.joints, model.joint(j).name)), None)
        if found is None:
            raise UserError(f"robot {spec.name}: no actuator group drives {n!r} or a joint above it; add an "
                            f"ActuatorGroup for it to release it for tracking")
        extra.append(dataclasses.replace(found, joints=re.escape(n)))
    return tuple(groups) + tuple(extra)


def build_tracking(spec: RobotSpec, options: SceneOptions = PLAIN, release: tuple[str, ...] = ()) -> ResolvedRobot:
    """The scene with ``spec``'s robot, every joint trained (``every_joint_trained``), built as ``options`` says."""
    return build(every_joint_trained(spec, release), options)
