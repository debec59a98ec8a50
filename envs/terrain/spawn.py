"""How high a robot must start so that none of its collision geoms begins inside the ground.

A plane pushes a foot that starts below it back out whatever the depth, so on flat ground robots start at their
spec's ``base_height`` even though the randomized initial joint angles (``init_joint_scale``) put the feet
several centimetres into the floor. A heightfield is a grid of thin prisms (one per triangle): a foot that
starts deeper than a few millimetres collides with the sides of the prisms instead of their tops, and gets
wrong contact normals and depths (native MuJoCo: sideways pushes, robots that sink and fall; MuJoCo Warp:
depths of metres that launch the robot). On generated terrain robots therefore start ``spawn_lift`` higher:
a short drop onto the feet, as legged_gym's rough-terrain robots start.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

SAMPLES = 1024
"""Random initial poses drawn (besides the default pose) to find the lowest reach of the legs."""


def lowest_z(model: mujoco.MjModel, data: mujoco.MjData, g: int) -> float:
    """World height of the lowest point of geom ``g`` (spheres, capsules, boxes exactly; others by their
    bounding sphere), after ``mj_kinematics``."""
    z, rot, size = float(data.geom_xpos[g][2]), data.geom_xmat[g].reshape(3, 3), model.geom_size[g]
    t = model.geom_type[g]
    if t == mujoco.mjtGeom.mjGEOM_SPHERE:
        return z - float(size[0])
    if t == mujoco.mjtGeom.mjGEOM_CAPSULE:  # axis along the local z
        return z - abs(float(rot[2, 2])) * float(size[1]) - float(size[0])
    if t == mujoco.mjtGeom.mjGEOM_BOX:
        return z - float(np.abs(rot[2]) @ size)
    return z - float(model.geom_rbound[g])


def spawn_lift(model: mujoco.MjModel, base_qpos_adr: int, joint_qpos_adr: Sequence[int],
               default_joint_pos: Sequence[float], joint_scale: tuple[float, float], base_height: float,
               seed: int = 0) -> float:
    """How much higher than ``base_height`` (m, >= 0) an upright robot must start for every colliding geom of
    it to begin at or above the ground, over its initial joint poses (default pose x a per-joint factor uniform
    in ``joint_scale``; the default pose and ``SAMPLES`` random ones, drawn with a fixed seed)."""
    data = mujoco.MjData(model)
    robot = [g for g in range(model.ngeom)
             if model.geom_bodyid[g] != 0 and (model.geom_contype[g] or model.geom_conaffinity[g])]
    default = np.asarray(default_joint_pos, dtype=float)
    rng = np.random.default_rng(seed)
    scales = np.concatenate([np.ones((1, default.size)), rng.uniform(*joint_scale, size=(SAMPLES, default.size))])
    deepest = 0.0
    for scale in scales:
        data.qpos[:] = model.qpos0
        data.qpos[base_qpos_adr + 2] = base_height
        data.qpos[base_qpos_adr + 3:base_qpos_adr + 7] = (1.0, 0.0, 0.0, 0.0)
        data.qpos[list(joint_qpos_adr)] = default * scale
        mujoco.mj_kinematics(model, data)
        deepest = min(deepest, min(lowest_z(model, data, g) for g in robot))
    return -deepest
