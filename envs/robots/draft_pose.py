"""The drafted standing pose when the robot file has no keyframe, and the lowest point of a geom.

A file without a keyframe stands at its reference pose, usually on straight legs: singular knees, no margin to
push off. The draft bends each leg's knee and sets the hinge above it and the one below it that turn about the
same axis (hip pitch, ankle pitch) to minus half of it, so the foot stays under the hip and flat: the knee angle
is solved so the leg's height is STANDING_FRACTION of its straight height (a bent-knee pose like legged_gym's
ANYmal C and mjlab's G1 home poses). A leg without a joint named knee gets no pose: one line asks for a keyframe.
"""

from __future__ import annotations

import math
import re

import mujoco
import numpy as np

from contract.errors import UserError

KNEE = re.compile(r"knee|kfe|calf", re.IGNORECASE)
"""A leg joint whose name matches this is its knee."""
STANDING_FRACTION = {"biped": 0.989, "quadruped": 0.921}
"""Leg height at the drafted pose / at straight legs (knee angle 2 acos(fraction): 0.30 rad for a biped, as
mjlab's G1 home pose bends its knees 0.3 rad; 0.80 rad for a quadruped, as legged_gym's ANYmal C's 0.8)."""
PARALLEL = 0.95
"""Hinges whose world axes have a |cosine| above this turn about the same axis."""


def knee_angle(kind: str) -> float:
    """The knee bend (rad) that gives STANDING_FRACTION of the straight leg's height."""
    return 2.0 * math.acos(STANDING_FRACTION.get(kind, STANDING_FRACTION["quadruped"]))


def bent_legs(m: mujoco.MjModel, d: mujoco.MjData, chains: list[list[int]], kind: str) -> dict[int, float]:
    """Joint id -> angle: each chain's knee bent by ``knee_angle`` toward its range's larger side, the parallel
    hinges above and below it by minus half (signs from the axes' directions); one-line error without knees."""
    q = knee_angle(kind)
    out: dict[int, float] = {}
    for chain in chains:
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or "" for j in chain]
        knees = [j for j, n in zip(chain, names, strict=True) if KNEE.search(n)]
        if not knees:
            raise UserError(f"new robot: the file has no keyframe and the leg {', '.join(names)} has no joint "
                            "named knee: add a standing keyframe (<key name=\"home\" qpos=...>) to the file")
        knee = knees[0]
        low, high = m.jnt_range[knee] if m.jnt_limited[knee] else (-1.0, 1.0)
        bend = q if abs(high) >= abs(low) else -q
        out[knee] = bend
        axis = d.xaxis[knee]
        at = chain.index(knee)
        for part in (chain[:at][::-1], chain[at + 1:]):
            for j in part:
                cos = float(np.dot(axis, d.xaxis[j]))
                if abs(cos) > PARALLEL:
                    out[j] = -0.5 * bend * math.copysign(1.0, cos)
                    break
    return {j: _clipped(m, j, v) for j, v in out.items()}


def _clipped(m: mujoco.MjModel, j: int, v: float) -> float:
    if not m.jnt_limited[j]:
        return round(v, 3)
    return round(float(np.clip(v, m.jnt_range[j, 0], m.jnt_range[j, 1])), 3)


def lowest_point(m: mujoco.MjModel, d: mujoco.MjData, g: int) -> float:
    """The lowest world z of geom ``g``: exact for spheres, capsules, cylinders, ellipsoids and boxes; the
    bounding box's lowest corner for the others (meshes)."""
    size, z = m.geom_size[g], float(d.geom_xpos[g][2])
    rot = d.geom_xmat[g].reshape(3, 3)
    kind = int(m.geom_type[g])
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return z - float(size[0])
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return z - abs(float(rot[2, 2])) * float(size[1]) - float(size[0])
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return z - abs(float(rot[2, 2])) * float(size[1]) - float(size[0]) * math.sqrt(max(0.0, 1 - rot[2, 2] ** 2))
    if kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return z - float(np.sqrt(np.sum((rot[2, :] * size) ** 2)))
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return z - float(np.sum(np.abs(rot[2, :]) * size))
    signs = np.array([[x, y, w] for x in (-1, 1) for y in (-1, 1) for w in (-1, 1)], dtype=float)
    local = m.geom_aabb[g, :3] + signs * m.geom_aabb[g, 3:]
    return float((local @ rot.T + d.geom_xpos[g])[:, 2].min())
