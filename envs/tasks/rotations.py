"""Quaternion helpers (MuJoCo order w, x, y, z) for batches of quaternions ``[N, 4]``."""

from __future__ import annotations

import torch


def rotate_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Express world vectors ``v [N, 3]`` in the frame of the bodies with orientation ``q`` (R(q)^T v)."""
    w, xyz = q[:, :1], q[:, 1:]
    t = 2.0 * torch.cross(xyz, v, dim=-1)
    return v - w * t + torch.cross(xyz, t, dim=-1)


def from_yaw(yaw: torch.Tensor) -> torch.Tensor:
    """Quaternions of rotations by ``yaw [N]`` about the world z axis."""
    half = 0.5 * yaw
    zeros = torch.zeros_like(yaw)
    return torch.stack([torch.cos(half), zeros, zeros, torch.sin(half)], dim=-1)


def yaw_of(q: torch.Tensor) -> torch.Tensor:
    """Heading angle (rad, in (-pi, pi]) of quaternions ``[N, 4]``."""
    w, x, y, z = q.unbind(-1)
    return torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


