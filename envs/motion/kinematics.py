"""Forward kinematics of a floating-base robot in torch, batched over envs: the poses and velocities of chosen
bodies from ``qpos`` / ``qvel`` alone.

The tasks need them right after a reset too, when a backend's derived quantities (body poses, sensors) are still
those of the previous episode, and on every backend alike; so they are computed from the generalized state with
the model's own body offsets, orientations, joint axes and anchors (read once from the compiled model). A body may
carry any number of hinge and slide joints, the root one free joint; ``tests/envs/tasks/test_track.py`` checks
positions,
orientations and velocities against MuJoCo's ``mj_kinematics`` / ``mj_objectVelocity``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import torch

from contract.errors import UserError

_J = mujoco.mjtJoint


@dataclass(frozen=True)
class Joint:
    """One joint of a body, in the body's frame."""

    kind: int
    """``mjtJoint`` value: free, hinge or slide."""
    qpos_adr: int
    dof_adr: int
    axis: torch.Tensor
    """Unit axis ``[3]`` (body frame)."""
    anchor: torch.Tensor
    """Position ``[3]`` of the joint (body frame)."""
    cross: torch.Tensor
    """Cross-product matrix ``[3, 3]`` of ``axis`` (hinge rotations by Rodrigues' formula)."""


@dataclass(frozen=True)
class Link:
    """One body of the tree: its parent (index into the links; -1: the world) and its offset."""

    parent: int
    pos: torch.Tensor
    """Position in the parent's frame ``[3]``."""
    rot: torch.Tensor
    """Orientation in the parent's frame ``[3, 3]``."""
    joints: tuple[Joint, ...]


@dataclass(frozen=True)
class Poses:
    """Poses and velocities of the chosen bodies (world frame)."""

    pos: torch.Tensor
    """``[N, B, 3]`` body origins (m)."""
    rot: torch.Tensor
    """``[N, B, 3, 3]`` orientations (body -> world)."""
    lin_vel: torch.Tensor
    """``[N, B, 3]`` linear velocities of the body origins (m/s)."""
    ang_vel: torch.Tensor
    """``[N, B, 3]`` angular velocities (rad/s)."""


def quat_to_matrix(q: torch.Tensor) -> torch.Tensor:
    """Rotation matrices ``[..., 3, 3]`` of unit quaternions ``[..., 4]`` (w x y z)."""
    w, x, y, z = q.unbind(-1)
    flat = torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], dim=-1)
    return flat.unflatten(-1, (3, 3))


def cross_matrix(axis: np.ndarray) -> np.ndarray:
    """The matrix ``[3, 3]`` of ``v -> axis x v``."""
    x, y, z = (float(a) for a in axis)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def axis_angle(k: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """Rotations ``[N, 3, 3]`` by ``angle [N]`` about the unit axis of cross-product matrix ``k [3, 3]``
    (Rodrigues)."""
    s, c = torch.sin(angle).view(-1, 1, 1), torch.cos(angle).view(-1, 1, 1)
    return torch.eye(3, dtype=angle.dtype, device=angle.device) + s * k + (1.0 - c) * (k @ k)


class TreeKinematics:
    """Poses and velocities of ``body_ids`` of ``model`` from ``qpos [N, nq]`` and ``qvel [N, nv]`` (float32)."""

    def __init__(self, model: mujoco.MjModel, body_ids: tuple[int, ...], device: torch.device):
        def t(x: np.ndarray) -> torch.Tensor:
            return torch.tensor(np.asarray(x, dtype=np.float64), dtype=torch.float32, device=device)

        needed: set[int] = set()
        for b in body_ids:
            while b > 0:
                needed.add(b)
                b = int(model.body_parentid[b])
        order = sorted(needed)  # MuJoCo numbers a parent before its children
        index = {b: i for i, b in enumerate(order)}
        self.links: list[Link] = []
        for b in order:
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, model.body_quat[b])
            joints = []
            for j in range(int(model.body_jntadr[b]), int(model.body_jntadr[b]) + int(model.body_jntnum[b])):
                kind = int(model.jnt_type[j])
                if kind == _J.mjJNT_BALL or (kind == _J.mjJNT_FREE and model.body_parentid[b] != 0):
                    raise UserError(f"body {model.body(b).name}: forward kinematics handles hinge and slide joints, "
                                    "and a free joint on a root body")
                joints.append(Joint(kind, int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j]), t(model.jnt_axis[j]),
                                    t(model.jnt_pos[j]), t(cross_matrix(model.jnt_axis[j]))))
            parent = int(model.body_parentid[b])
            self.links.append(Link(index[parent] if parent > 0 else -1, t(model.body_pos[b]), t(rot.reshape(3, 3)),
                                   tuple(joints)))
        self.out = [index[b] for b in body_ids]
        """Which links are the chosen bodies, in ``body_ids`` order."""

    def __call__(self, qpos: torch.Tensor, qvel: torch.Tensor) -> Poses:
        n = qpos.shape[0]
        zero = torch.zeros(n, 3, dtype=qpos.dtype, device=qpos.device)
        world = (zero, torch.eye(3, dtype=qpos.dtype, device=qpos.device).expand(n, 3, 3), zero, zero)
        frames: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = []
        for link in self.links:
            p0, r0, v0, w0 = frames[link.parent] if link.parent >= 0 else world
            pos = p0 + r0 @ link.pos
            rot = r0 @ link.rot
            vel = v0 + torch.cross(w0, pos - p0, dim=-1)
            ang = w0
            for j in link.joints:
                pos, rot, vel, ang = _joint(j, qpos, qvel, pos, rot, vel, ang)
            frames.append((pos, rot, vel, ang))
        pick = [frames[i] for i in self.out]
        return Poses(*(torch.stack([f[k] for f in pick], dim=1) for k in range(4)))


def _joint(j: Joint, qpos: torch.Tensor, qvel: torch.Tensor, pos: torch.Tensor, rot: torch.Tensor, vel: torch.Tensor,
           ang: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A body frame moved by one of its joints (position, orientation, their velocities)."""
    if j.kind == _J.mjJNT_FREE:  # a root body: its pose and (world linear, body angular) velocity are the state's
        rot = quat_to_matrix(qpos[:, j.qpos_adr + 3:j.qpos_adr + 7])
        omega = (rot @ qvel[:, j.dof_adr + 3:j.dof_adr + 6].unsqueeze(-1)).squeeze(-1)
        return qpos[:, j.qpos_adr:j.qpos_adr + 3], rot, qvel[:, j.dof_adr:j.dof_adr + 3], omega
    q, qd = qpos[:, j.qpos_adr], qvel[:, j.dof_adr].unsqueeze(-1)
    axis_w = rot @ j.axis
    if j.kind == _J.mjJNT_SLIDE:
        new_pos = pos + axis_w * q.unsqueeze(-1)
        vel = vel + torch.cross(ang, new_pos - pos, dim=-1) + axis_w * qd
        return new_pos, rot, vel, ang
    anchor = pos + rot @ j.anchor
    new_rot = rot @ axis_angle(j.cross, q)
    new_pos = anchor - new_rot @ j.anchor
    spin = axis_w * qd
    vel = vel + torch.cross(ang, new_pos - pos, dim=-1) + torch.cross(spin, new_pos - anchor, dim=-1)
    return new_pos, new_rot, vel, ang + spin


def rotation_angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The angle (rad, in [0, pi]) of the rotation between orientations ``a`` and ``b`` ``[..., 3, 3]`` (accurate
    for small angles: atan2 of the rotation's sine and cosine)."""
    r = a.transpose(-1, -2) @ b
    sin = 0.5 * torch.stack([r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0], r[..., 1, 0] - r[..., 0, 1]],
                            dim=-1).norm(dim=-1)
    cos = 0.5 * (r[..., 0, 0] + r[..., 1, 1] + r[..., 2, 2] - 1.0)
    return torch.atan2(sin, cos)


def yaw_rotation(rot: torch.Tensor) -> torch.Tensor:
    """The heading part ``[..., 3, 3]`` (a rotation about world z) of orientations ``rot [..., 3, 3]``."""
    yaw = torch.atan2(rot[..., 1, 0], rot[..., 0, 0])
    c, s = torch.cos(yaw), torch.sin(yaw)
    zero, one = torch.zeros_like(yaw), torch.ones_like(yaw)
    return torch.stack([c, -s, zero, s, c, zero, zero, zero, one], dim=-1).unflatten(-1, (3, 3))
