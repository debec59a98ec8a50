"""``ResolvedRobot``: a RobotSpec after ``envs/scenes/assemble.build``: the compiled scene and every index by name.

The task reads every size and address from here (joint qpos / dof addresses, actuator order, sensor addresses,
body ids), so nothing depends on the order of elements in the robot's file.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco

from envs.robots.spec import RobotSpec


@dataclass(frozen=True)
class ResolvedRobot:
    """The compiled scene with the robot in it, and the robot's elements as indices of that model."""

    spec: RobotSpec
    """The spec this was built from."""
    model: mujoco.MjModel
    """The compiled scene (floor, light, robot, task sensors, position servos)."""
    joint_names: tuple[str, ...]
    """Actuated joints in policy order."""
    joint_qpos_adr: tuple[int, ...]
    """qpos address of each actuated joint (policy order)."""
    joint_dof_adr: tuple[int, ...]
    """qvel address of each actuated joint (policy order)."""
    ctrl_from_policy: tuple[int, ...]
    """For each actuator in model order, the policy index whose joint it drives, or ``num_joints + h`` for the
    h-th held joint (identity when created here: trained joints first, then held ones)."""
    default_joint_pos: tuple[float, ...]
    """Standing pose in policy order (rad)."""
    kp: tuple[float, ...]
    """Position gain per actuated joint (policy order)."""
    kd: tuple[float, ...]
    """Velocity gain per actuated joint (policy order)."""
    effort_limit: tuple[float, ...]
    """Torque limit per actuated joint (policy order; inf when the servo is not force-limited)."""
    action_scale: tuple[float, ...]
    """Joint target offset (rad) per unit of action, per actuated joint (policy order)."""
    velocity_limit: tuple[float, ...]
    """Motor speed limit per actuated joint (rad/s; policy order; inf where none is given)."""
    held_joint_names: tuple[str, ...]
    """Joints held at a pose by position servos, outside the action space."""
    held_qpos_adr: tuple[int, ...]
    """qpos address of each held joint."""
    held_joint_pos: tuple[float, ...]
    """The pose each held joint is held at (its servo's target; its position at reset)."""
    welded_joint_names: tuple[str, ...]
    """Joints of the file removed at assembly (their bodies fixed at a pose)."""
    base_body_id: int
    """Body id of the floating base."""
    base_joint: str
    """Name of the base's free joint."""
    base_qpos_adr: int
    """qpos address of the base's free joint (position, then quaternion wxyz)."""
    base_dof_adr: int
    """qvel address of the base's free joint (world linear velocity, then body-frame angular velocity)."""
    mass_body_id: int
    """Body whose mass is randomized."""
    foot_names: tuple[str, ...]
    """Foot geoms (or bodies), in foot-column order."""
    foot_touch_adr: tuple[int, ...]
    """sensordata address of each foot's touch sensor (normal force, N)."""
    foot_pos_adr: tuple[int, ...]
    """sensordata addresses of the feet's world positions (3 per foot, foot-major)."""
    foot_vel_adr: tuple[int, ...]
    """sensordata addresses of the feet's world linear velocities (3 per foot, foot-major)."""
    termination_sensors: tuple[str, ...]
    """Names of the contact sensors (collision geom vs floor) whose contact ends an episode."""
    termination_force_adr: tuple[int, ...]
    """sensordata address of each termination sensor's normal force (N)."""
    penalized_bodies: tuple[str, ...]
    """Bodies whose floor contacts are penalized."""
    penalized_force_adr: tuple[int, ...]
    """sensordata address of the normal force of each penalized collision geom's contact sensor (N)."""
    penalized_body_of: tuple[int, ...]
    """For each penalized sensor, the index of its body in ``penalized_bodies``."""
    camera: str
    """Name of the camera that tracks the robot."""
    foot_geom_ids: tuple[tuple[int, ...], ...] = ()
    """Collision geom ids (of ``model``) of each foot, in foot-column order."""

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    @property
    def num_held(self) -> int:
        return len(self.held_joint_names)

    @property
    def num_feet(self) -> int:
        return len(self.foot_names)

    @property
    def joint_range(self) -> tuple[tuple[float, float] | tuple[None, None], ...]:
        """``(low, high)`` (rad) of each actuated joint in policy order; ``(None, None)`` for an unlimited one."""
        m = self.model
        return tuple((float(m.joint(n).range[0]), float(m.joint(n).range[1])) if m.jnt_limited[m.joint(n).id]
                     else (None, None) for n in self.joint_names)
