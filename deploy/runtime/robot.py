"""What the runtime needs from a robot: the ``Robot`` protocol, the sensor sample and the joint command.

Arrays are in the robot's own joint order (``Robot.joint_names``, its SDK's order); the runtime maps them to the
policy's order by name. Frames: the IMU quaternion rotates base-frame vectors into a gravity-aligned world frame
(w, x, y, z; yaw arbitrary); the gyro and the optional base velocity are in the base frame (x forward, y left,
z up). Times are seconds on the robot's clock (``Robot.clock``), the clock the samples are stamped with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

import numpy as np


@dataclass(frozen=True)
class RobotState:
    """One sensor sample."""

    stamp: float
    """When the sensors were read (s, robot clock)."""
    joint_pos: np.ndarray
    """Joint positions (rad), robot order."""
    joint_vel: np.ndarray
    """Joint velocities (rad/s), robot order."""
    imu_quat: np.ndarray
    """Base orientation (w, x, y, z): base frame -> gravity-aligned world frame."""
    gyro: np.ndarray
    """Base angular velocity (rad/s), base frame."""
    base_lin_vel: Optional[np.ndarray] = None
    """Base linear velocity estimate (m/s), base frame; None when the robot has no estimator."""
    height_scan: Optional[np.ndarray] = None
    """Height of the base above the ground (m, positive) at each scan point of the metadata's ``height_scan``
    grid (``ObservationBuilder.scan_points``, x-major, in the base's yaw frame); None without perception."""


@dataclass(frozen=True)
class JointCommand:
    """Per-joint targets for the robot's motor controllers (robot order): ``tau = kp (target - q) - kd qd + tau_ff``."""

    target: np.ndarray
    """Position targets (rad)."""
    kp: np.ndarray
    """Stiffness (N m/rad)."""
    kd: np.ndarray
    """Damping (N m s/rad)."""
    tau_ff: np.ndarray
    """Feed-forward torque (N m); zeros for a position-controlled policy."""


class Robot(Protocol):
    """The adapter between the runtime and one robot (or the simulated one). Both calls must return quickly:
    ``read`` the newest sample received (None before the first), ``write`` hands a command to the transport."""

    @property
    def joint_names(self) -> Sequence[str]:
        """The robot's joints in its own order (names as in the policy's ``joint_names``, or mapped to them with
        the runtime's ``joint_map``)."""
        ...

    def read(self) -> Optional[RobotState]:
        ...

    def write(self, command: JointCommand) -> None:
        ...

    def clock(self) -> float:
        """Now, on the clock the samples are stamped with (s)."""
        ...
