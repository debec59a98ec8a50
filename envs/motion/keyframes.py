"""Keyframe clips: joint-space splines between poses a user lists, the base placed so the stance feet stay on the
floor where they stood.

A ``Keyframes`` lists keys at increasing times, each a pose (joint name or regex -> angle; joints a key does not
name keep the previous key's angle, the first key's start at the robot's default pose) and a heading. Every joint
follows a cubic Hermite spline through its keys (monotone slopes: no overshoot past a key, at rest at a hold and at
both ends), sampled at ``fps``. The base stays upright; for each frame the forward kinematics with the base at the
origin give the stance feet's lowest point and their mean horizontal position, and the base is lifted so that
lowest point touches the floor (z = 0) and shifted so that mean position stays where it was in the first frame.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import mujoco
import numpy as np

from contract.errors import UserError
from contract.motion import Clip, checked
from envs.robots.resolved import ResolvedRobot


@dataclass(frozen=True)
class Key:
    """One keyframe."""

    t: float
    """Time (s) from the clip's start; the first key's is 0."""
    pose: tuple[tuple[str, float], ...] = ()
    """Joint name or regex (full match) -> angle (rad); the other joints keep the previous key's angle."""
    yaw: float | None = None
    """Heading of the base (rad; None: the previous key's, 0 at the first)."""


@dataclass(frozen=True)
class Keyframes:
    """A keyframe clip's recipe."""

    name: str
    """The clip's name."""
    keys: tuple[Key, ...]
    """At least two keys, times strictly increasing from 0."""
    fps: float = 50.0
    """Frames per second of the clip."""
    stance: tuple[str, ...] = ()
    """The feet (the robot's ``foot_names``) that stay on the floor; empty: every foot."""


def key_table(spec: Keyframes, robot: ResolvedRobot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Key times ``[K]``, joint angles ``[K, J]`` (the robot's joint order) and headings ``[K]``; one line for a
    pattern no joint matches, times not increasing from 0, or fewer than two keys."""
    where = f"keyframe clip {spec.name}"
    times = np.array([k.t for k in spec.keys], dtype=np.float64)
    if len(times) < 2 or times[0] != 0.0 or not (np.diff(times) > 0).all():
        raise UserError(f"{where}: key times {times.tolist()} are not allowed; expected two or more, strictly "
                        "increasing from 0")
    names = robot.joint_names
    angles = np.array(robot.default_joint_pos, dtype=np.float64)
    yaw, rows, yaws = 0.0, [], []
    for k in spec.keys:
        angles = angles.copy()
        for pattern, value in k.pose:
            hit = [i for i, n in enumerate(names) if re.fullmatch(pattern, n)]
            if not hit:
                raise UserError(f"{where}: key at t={k.t:g} s: '{pattern}' matches none of the robot's joints "
                                f"({', '.join(names)})")
            angles[hit] = value
        yaw = yaw if k.yaw is None else float(k.yaw)
        rows.append(angles)
        yaws.append(yaw)
    return times, np.stack(rows), np.array(yaws)


def hermite(times: np.ndarray, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``values [K, J]`` at ``times [K]`` interpolated at ``t`` by cubic Hermite segments with monotone slopes
    (Fritsch-Carlson, as PCHIP: zero at a turning point, a hold and both ends): smooth, through every key, never
    beyond the keys around it (no overshoot past a joint limit), at rest at the first and last key."""
    h = np.diff(times)[:, None]
    d = np.diff(values, axis=0) / h  # [K-1, J] secant slopes
    slopes = np.zeros_like(values)
    w1, w2 = 2 * h[1:] + h[:-1], h[1:] + 2 * h[:-1]
    same = d[:-1] * d[1:] > 0
    safe = lambda x: np.where(same, x, 1.0)  # noqa: E731
    slopes[1:-1] = np.where(same, (w1 + w2) / (w1 / safe(d[:-1]) + w2 / safe(d[1:])), 0.0)
    i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    hi = h[i]
    s = ((t - times[i])[:, None]) / hi
    h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
    return h00 * values[i] + h10 * hi * slopes[i] + h01 * values[i + 1] + h11 * hi * slopes[i + 1]


def lowest_point(model: mujoco.MjModel, data: mujoco.MjData, geom: int) -> float:
    """The lowest z of a geom in its current pose (exact for boxes, spheres, capsules, cylinders, ellipsoids; the
    bounding sphere otherwise)."""
    z, rot, size = data.geom_xpos[geom][2], data.geom_xmat[geom].reshape(3, 3), model.geom_size[geom]
    kind = model.geom_type[geom]
    G = mujoco.mjtGeom
    if kind == G.mjGEOM_BOX:
        return float(z - np.abs(rot[2]) @ size)
    if kind == G.mjGEOM_SPHERE:
        return float(z - size[0])
    if kind == G.mjGEOM_CAPSULE:
        return float(z - abs(rot[2, 2]) * size[1] - size[0])
    if kind == G.mjGEOM_CYLINDER:
        return float(z - abs(rot[2, 2]) * size[1] - math.sqrt(max(0.0, 1 - rot[2, 2] ** 2)) * size[0])
    if kind == G.mjGEOM_ELLIPSOID:
        return float(z - np.linalg.norm(rot[2] * size))
    return float(z - model.geom_rbound[geom])


def stance_geoms(spec: Keyframes, robot: ResolvedRobot) -> list[int]:
    feet = spec.stance or robot.foot_names
    unknown = [f for f in feet if f not in robot.foot_names]
    if unknown:
        raise UserError(f"keyframe clip {spec.name}: stance feet {', '.join(unknown)} are not the robot's feet "
                        f"({', '.join(robot.foot_names)})")
    return [g for f in feet for g in robot.foot_geom_ids[robot.foot_names.index(f)]]


def make_clip(spec: Keyframes, robot: ResolvedRobot) -> Clip:
    """The keyframe clip of ``spec`` for ``robot`` (every joint of ``robot.joint_names``; see the module
    docstring)."""
    times, angles, yaws = key_table(spec, robot)
    t = np.arange(int(math.floor(times[-1] * spec.fps + 1e-9)) + 1) / spec.fps
    joints, heading = hermite(times, angles, t), hermite(times, yaws[:, None], t)[:, 0]
    model, geoms = robot.model, stance_geoms(spec, robot)
    data = mujoco.MjData(model)
    b = robot.base_qpos_adr
    quat = np.stack([np.cos(heading / 2), 0 * heading, 0 * heading, np.sin(heading / 2)], axis=1)
    base, start = np.zeros((len(t), 3)), np.zeros(2)
    for f in range(len(t)):
        data.qpos[:] = model.qpos0
        data.qpos[b:b + 3] = 0.0
        data.qpos[b + 3:b + 7] = quat[f]
        data.qpos[list(robot.joint_qpos_adr)] = joints[f]
        mujoco.mj_kinematics(model, data)
        centre = data.geom_xpos[geoms, :2].mean(axis=0)
        if f == 0:
            start = centre
        base[f] = [*(start - centre), -min(lowest_point(model, data, g) for g in geoms)]
    return checked(Clip(spec.fps, robot.joint_names, base, quat, joints, spec.name), f"keyframe clip {spec.name}")


SQUAT_WAVE = Keyframes("squat_wave", (
    Key(0.0), Key(1.0),
    Key(2.5, ((".*_hip_pitch_joint", -0.7), (".*_knee_joint", 1.4), (".*_ankle_pitch_joint", -0.7),
              (".*_shoulder_pitch_joint", -0.5))),
    Key(3.5),
    Key(5.0, ((".*_hip_pitch_joint", -0.15), (".*_knee_joint", 0.3), (".*_ankle_pitch_joint", -0.15),
              (".*_shoulder_pitch_joint", 0.0), ("right_shoulder_roll_joint", -1.4), ("right_elbow_joint", 1.2))),
    Key(5.6, (("right_elbow_joint", 0.3),)), Key(6.2, (("right_elbow_joint", 1.2),)),
    Key(6.8, (("right_elbow_joint", 0.3),)), Key(7.4, (("right_elbow_joint", 1.2),)),
    Key(8.5, (("right_shoulder_roll_joint", 0.0), ("right_elbow_joint", 0.0))),
    Key(9.5),
))
"""The built-in humanoid's squat with an arm wave (9.5 s at 50 fps): stand, squat with the arms forward, rise,
wave the right forearm three times with the arm raised sideways, lower it, stand."""

PRESETS: dict[str, Keyframes] = {"squat_wave": SQUAT_WAVE}
"""Keyframe recipes by name (``python -m tools.keyframe_clip --preset NAME``)."""
