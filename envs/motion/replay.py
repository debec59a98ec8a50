"""A clip replayed in a robot's MuJoCo model: the generalized positions and velocities of every frame, and the
poses and velocities of chosen bodies (derived on load, never stored in a clip file).

Positions come from forward kinematics of each frame (``mj_kinematics``); velocities from finite differences of the
frames (``contract.motion.derivative`` / ``angular_velocity``: central inside, one-sided at the ends), so a reset to
a frame starts with the clip's own motion.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from contract.errors import UserError
from contract.motion import Clip, angular_velocity, derivative, velocities
from envs.motion.formats import columns_for

_FREE, _BALL = mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL


@dataclass(frozen=True)
class Reference:
    """A clip in a model, frame by frame (float64, world frame unless said)."""

    fps: float
    """Frames per second (the clip's)."""
    qpos: np.ndarray
    """``[F, nq]`` generalized positions (the model's ``qpos0`` where the clip says nothing)."""
    qvel: np.ndarray
    """``[F, nv]`` generalized velocities (free joint: world linear, base-frame angular, as MuJoCo's)."""
    body_pos: np.ndarray
    """``[F, B, 3]`` positions of the chosen bodies (m)."""
    body_quat: np.ndarray
    """``[F, B, 4]`` their orientations (w x y z, body -> world)."""
    body_lin_vel: np.ndarray
    """``[F, B, 3]`` their linear velocities (m/s)."""
    body_ang_vel: np.ndarray
    """``[F, B, 3]`` their angular velocities (rad/s)."""

    @property
    def frames(self) -> int:
        return int(self.qpos.shape[0])


def model_joints(model: mujoco.MjModel, where: str) -> tuple[int, list[int]]:
    """The model's one free joint (its floating base) and its hinge and slide joints in the model's order; one line
    for a model without exactly one free joint or with a ball joint."""
    free = [j for j in range(model.njnt) if model.jnt_type[j] == _FREE]
    if len(free) != 1:
        raise UserError(f"{where}: a clip drives a model with one floating base (free joint); this one has "
                        f"{len(free)}")
    balls = [model.joint(j).name for j in range(model.njnt) if model.jnt_type[j] == _BALL]
    if balls:
        raise UserError(f"{where}: ball joints ({', '.join(balls)}) have no angle in a clip")
    return free[0], [j for j in range(model.njnt) if model.jnt_type[j] != _FREE]


def replay(model: mujoco.MjModel, clip: Clip, body_ids: tuple[int, ...], where: str) -> Reference:
    """``clip`` in ``model`` (its joints matched by name, every hinge / slide joint of the model given by the clip),
    with the poses and velocities of ``body_ids``."""
    free, joints = model_joints(model, where)
    names = tuple(model.joint(j).name for j in joints)
    cols = columns_for(clip, names, where)
    rates = velocities(clip)
    F = clip.frames
    qpos = np.tile(model.qpos0, (F, 1))
    qvel = np.zeros((F, model.nv))
    q0, v0 = int(model.jnt_qposadr[free]), int(model.jnt_dofadr[free])
    qpos[:, q0:q0 + 3], qpos[:, q0 + 3:q0 + 7] = clip.base_pos, clip.base_quat
    qvel[:, v0:v0 + 3], qvel[:, v0 + 3:v0 + 6] = rates.base_lin_vel, rates.base_ang_vel
    qpos[:, model.jnt_qposadr[joints]] = clip.joint_pos[:, cols]
    qvel[:, model.jnt_dofadr[joints]] = rates.joint_vel[:, cols]
    data = mujoco.MjData(model)
    ids = list(body_ids)
    pos, quat = np.zeros((F, len(ids), 3)), np.zeros((F, len(ids), 4))
    for f in range(F):
        data.qpos[:] = qpos[f]
        mujoco.mj_kinematics(model, data)
        pos[f], quat[f] = data.xpos[ids], data.xquat[ids]
    dt = 1.0 / clip.fps
    ang = np.stack([angular_velocity(quat[:, b], dt) for b in range(len(ids))], axis=1) if ids else pos.copy()
    return Reference(clip.fps, qpos, qvel, pos, quat, derivative(pos, dt), ang)
