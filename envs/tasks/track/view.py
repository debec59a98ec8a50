"""What one control step of the tracking task has of the robot: the readout turned into named quantities, each
computed on first use (the tracked bodies' poses by torch forward kinematics: valid right after a reset too)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch

from envs.motion.kinematics import Poses, TreeKinematics, quat_to_matrix
from envs.physics.base import PhysicsReadout
from envs.tasks.track.observations import Robot


@dataclass(frozen=True)
class Columns:
    """Where the robot's quantities are in the readout (resolved by name once)."""

    base_qpos: int
    """qpos address of the base's free joint (position, quaternion)."""
    base_dof: int
    """qvel address of the base's free joint (world linear, base angular velocity)."""
    joint_qpos: torch.Tensor
    """``[J]`` qpos address of each trained joint (policy order)."""
    joint_dof: torch.Tensor
    """``[J]`` qvel address of each."""
    anchor: int
    """Index of the anchor among the tracked bodies."""


@dataclass(eq=False)
class View:
    """The named quantities of a readout (of every env, or of some rows)."""

    r: PhysicsReadout
    fk: TreeKinematics
    c: Columns

    @cached_property
    def poses(self) -> Poses:
        """The tracked bodies' poses and velocities (world)."""
        return self.fk(self.r.qpos, self.r.qvel)

    @cached_property
    def base_rot(self) -> torch.Tensor:
        b = self.c.base_qpos
        return quat_to_matrix(self.r.qpos[:, b + 3:b + 7])

    @cached_property
    def joint_pos(self) -> torch.Tensor:
        return self.r.qpos[:, self.c.joint_qpos]

    @cached_property
    def joint_vel(self) -> torch.Tensor:
        return self.r.qvel[:, self.c.joint_dof]

    def robot(self) -> Robot:
        """What the observation reads of the robot."""
        d, rot_t = self.c.base_dof, self.base_rot.transpose(1, 2)
        lin = (rot_t @ self.r.qvel[:, d:d + 3].unsqueeze(-1)).squeeze(-1)
        gravity = -self.base_rot[:, 2, :]  # R^T (0, 0, -1)
        a = self.c.anchor
        return Robot(lin, self.r.qvel[:, d + 3:d + 6], gravity, self.joint_pos, self.joint_vel,
                     self.poses.pos[:, a], self.poses.rot[:, a])
