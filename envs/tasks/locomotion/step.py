"""What one control step of the velocity-tracking task has: the readout, turned into named quantities.

``Step`` is built once per step (and for the rows of freshly reset envs) from the physics readout; its
quantities are computed on first use and kept. Observation values, reward terms, terminations and metrics all
read it, so a new quantity is one property here. Every column comes from addresses resolved by name at build
time (``Addresses``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch

from envs.physics.base import PhysicsReadout
from envs.robots.resolved import ResolvedRobot
from envs.tasks.base import columns
from envs.tasks.rotations import rotate_inverse, yaw_of


@dataclass(frozen=True)
class Addresses:
    """Columns of the readout by meaning (slices where contiguous: views, no copies)."""

    base_pos: slice
    base_quat: slice
    base_linvel: slice
    base_angvel: slice
    base_dofs: slice
    joint_qpos: slice | torch.Tensor
    joint_dof: slice | torch.Tensor
    held_qpos: slice | torch.Tensor
    foot_touch: slice | torch.Tensor
    foot_vel: slice | torch.Tensor
    foot_pos: slice | torch.Tensor
    term_force: slice | torch.Tensor
    pen_force: slice | torch.Tensor
    pen_bodies: tuple[int, torch.Tensor] | None
    """Penalized geoms' body (count, index per sensor); None when each body has one sensor in order."""
    torque_order: torch.Tensor | None
    """Actuator of each trained joint in policy order (None: the actuators are in policy order)."""

    @staticmethod
    def of(rb: ResolvedRobot, device: torch.device) -> Addresses:
        b, v = rb.base_qpos_adr, rb.base_dof_adr
        nb = len(rb.penalized_bodies)
        pen = None if rb.penalized_body_of == tuple(range(nb)) else (
            nb, torch.tensor(rb.penalized_body_of, dtype=torch.long, device=device))
        J = rb.num_joints
        identity = rb.ctrl_from_policy == tuple(range(J))
        policy_of_ctrl = sorted(range(J), key=lambda a: rb.ctrl_from_policy[a])  # actuator driving each joint
        if rb.num_held:  # the actuators of the trained joints only, in policy order
            policy_of_ctrl = [rb.ctrl_from_policy.index(i) for i in range(J)]
        order = None if identity else torch.tensor(policy_of_ctrl, dtype=torch.long, device=device)
        return Addresses(
            base_pos=slice(b, b + 3), base_quat=slice(b + 3, b + 7), base_linvel=slice(v, v + 3),
            base_angvel=slice(v + 3, v + 6), base_dofs=slice(v, v + 6),
            joint_qpos=columns(rb.joint_qpos_adr, device), joint_dof=columns(rb.joint_dof_adr, device),
            held_qpos=columns(rb.held_qpos_adr, device), foot_touch=columns(rb.foot_touch_adr, device),
            foot_vel=columns(rb.foot_vel_adr, device), foot_pos=columns(rb.foot_pos_adr, device),
            term_force=columns(rb.termination_force_adr, device), pen_force=columns(rb.penalized_force_adr, device),
            pen_bodies=pen, torque_order=order)


class Step:
    """The named quantities of a readout ``r`` (``[N, ...]`` tensors on the env's device)."""

    def __init__(self, r: PhysicsReadout, adr: Addresses, num_feet: int, held: bool):
        self.r, self.adr, self.num_feet, self.held = r, adr, num_feet, held

    @property
    def num_envs(self) -> int:
        return self.r.qpos.shape[0]

    @cached_property
    def base_quat(self) -> torch.Tensor:
        """Base orientation ``[N, 4]`` (w, x, y, z)."""
        return self.r.qpos[:, self.adr.base_quat]

    @cached_property
    def yaw(self) -> torch.Tensor:
        """Heading of the base ``[N]`` (rad; the heading command's steering and the height scan read it)."""
        return yaw_of(self.base_quat)

    @cached_property
    def base_xy(self) -> torch.Tensor:
        """Base position on the ground plane ``[N, 2]`` (m, world)."""
        start = self.adr.base_pos.start
        return self.r.qpos[:, start:start + 2]

    @cached_property
    def base_z(self) -> torch.Tensor:
        """Base height above the world origin ``[N]`` (m)."""
        return self.r.qpos[:, self.adr.base_pos.start + 2]

    @cached_property
    def lin_vel_b(self) -> torch.Tensor:
        """Base linear velocity in the base frame ``[N, 3]``."""
        return rotate_inverse(self.base_quat, self.r.qvel[:, self.adr.base_linvel])

    @cached_property
    def ang_vel_b(self) -> torch.Tensor:
        """Base angular velocity in the base frame ``[N, 3]`` (the free joint's is already)."""
        return self.r.qvel[:, self.adr.base_angvel]

    @cached_property
    def gravity_b(self) -> torch.Tensor:
        """Gravity direction in the base frame ``[N, 3]``."""
        gravity = torch.zeros(self.num_envs, 3, device=self.base_quat.device)  # a tensor from a list: a host copy
        gravity[:, 2] = -1.0
        return rotate_inverse(self.base_quat, gravity)

    @cached_property
    def joint_pos(self) -> torch.Tensor:
        """Trained joints' angles ``[N, J]`` (policy order)."""
        return self.r.qpos[:, self.adr.joint_qpos]

    @cached_property
    def joint_vel(self) -> torch.Tensor:
        """Trained joints' velocities ``[N, J]``."""
        return self.r.qvel[:, self.adr.joint_dof]

    @cached_property
    def foot_force(self) -> torch.Tensor:
        """Contact force on each foot ``[N, F]`` (N)."""
        return self.r.sensordata[:, self.adr.foot_touch]

    @cached_property
    def forbidden_force(self) -> torch.Tensor:
        """Contact force on each body whose contact ends the episode ``[N, T]``."""
        return self.r.sensordata[:, self.adr.term_force]

    @cached_property
    def penalized_force(self) -> torch.Tensor:
        """Largest contact force per penalized body ``[N, B]`` (a body may have several collision geoms)."""
        force = self.r.sensordata[:, self.adr.pen_force]
        if self.adr.pen_bodies is None:
            return force
        nb, index = self.adr.pen_bodies
        out = torch.zeros(force.shape[0], nb, device=force.device, dtype=force.dtype)
        return out.scatter_reduce(1, index.expand(force.shape[0], -1), force, reduce="amax")

    @cached_property
    def foot_vel_w(self) -> torch.Tensor:
        """World linear velocity of each foot ``[N, F, 3]``."""
        return self.r.sensordata[:, self.adr.foot_vel].reshape(self.num_envs, self.num_feet, 3)

    @cached_property
    def foot_pos_w(self) -> torch.Tensor:
        """World position of each foot's site ``[N, F, 3]``."""
        return self.r.sensordata[:, self.adr.foot_pos].reshape(self.num_envs, self.num_feet, 3)

    @cached_property
    def joint_torques(self) -> torch.Tensor:
        """Servo torque of each trained joint ``[N, J]`` (policy order)."""
        order = self.adr.torque_order
        return self.r.actuator_force if order is None else self.r.actuator_force[:, order]

    @cached_property
    def torques(self) -> torch.Tensor:
        """The torques the policy is charged for: every actuator's, or the trained joints' with held joints."""
        return self.joint_torques if self.held else self.r.actuator_force
