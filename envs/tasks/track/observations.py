"""The motion-tracking task's observation, as one table (``envs/tasks/observations.py``), and each term's value.

The robot's own state (base velocities and gravity in the base frame, joints, last actions: the velocity-tracking
task's terms and scales) and the reference's: its joint targets at the next ``future_frames`` frames, its anchor
body's pose at the next frame relative to the robot's anchor, and the clip's phase. Sim2sim
(``deploy/sim2sim_track.py``) rebuilds each term by its exported name.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.locomotion.obs_table import OBS_SCALES
from envs.tasks.obs_table import ObsTerm, declared
from envs.tasks.track.config import TrackEnvConfig


@dataclass(frozen=True)
class Robot:
    """What the terms read of the robot (``[n, ...]``)."""

    lin_vel_b: torch.Tensor
    ang_vel_b: torch.Tensor
    gravity_b: torch.Tensor
    joint_pos: torch.Tensor
    joint_vel: torch.Tensor
    anchor_pos: torch.Tensor
    """``[n, 3]`` the anchor body's position (world)."""
    anchor_rot: torch.Tensor
    """``[n, 3, 3]`` its orientation."""


@dataclass(frozen=True)
class Ahead:
    """What the terms read of the reference ahead of the robot (``[n, ...]``)."""

    joint_pos: torch.Tensor
    """``[n, K, J]`` joint angles at the next ``K`` frames."""
    joint_vel: torch.Tensor
    """``[n, K, J]``."""
    anchor_pos: torch.Tensor
    """``[n, 3]`` the anchor's position at the next frame."""
    anchor_rot: torch.Tensor
    """``[n, 3, 3]`` its orientation."""
    phase: torch.Tensor
    """``[n]`` the share of the clip played."""


@dataclass(frozen=True)
class Inputs:
    """What the terms read: the robot, the reference ahead, the default pose ``[J]``, the last actions."""

    robot: Robot
    ahead: Ahead
    default: torch.Tensor
    last_actions: torch.Tensor

    def anchor_pos(self) -> torch.Tensor:
        """``[n, 3]`` the reference anchor's next position in the robot anchor's frame."""
        rot_t = self.robot.anchor_rot.transpose(1, 2)
        return (rot_t @ (self.ahead.anchor_pos - self.robot.anchor_pos).unsqueeze(-1)).squeeze(-1)

    def anchor_ori(self) -> torch.Tensor:
        """``[n, 6]`` the first two columns of the reference anchor's next orientation in the robot anchor's."""
        rel = self.robot.anchor_rot.transpose(1, 2) @ self.ahead.anchor_rot
        return rel[:, :, :2].transpose(1, 2).flatten(1)


Row = ObsTerm[Inputs, None, TrackEnvConfig]
"""A row of this family's table (no bounds: the observer's ``OBS_LIMIT`` holds for every column)."""
_S = OBS_SCALES
TABLE: tuple[Row, ...] = declared((
    Row("base_lin_vel", 3, _S["lin_vel"], value=lambda x: x.robot.lin_vel_b, noise=lambda c: c.noise.lin_vel),
    Row("base_ang_vel", 3, _S["ang_vel"], value=lambda x: x.robot.ang_vel_b, noise=lambda c: c.noise.ang_vel),
    Row("projected_gravity", 3, 1.0, value=lambda x: x.robot.gravity_b, noise=lambda c: c.noise.gravity),
    Row("joint_pos", "joints", _S["joint_pos"], value=lambda x: x.robot.joint_pos - x.default,
        noise=lambda c: c.noise.joint_pos),
    Row("joint_vel", "joints", _S["joint_vel"], value=lambda x: x.robot.joint_vel, noise=lambda c: c.noise.joint_vel),
    Row("last_actions", "joints", 1.0, value=lambda x: x.last_actions),
    Row("motion_joint_pos", "motion_joints", 1.0, value=lambda x: (x.ahead.joint_pos - x.default).flatten(1)),
    Row("motion_joint_vel", "motion_joints", _S["joint_vel"], value=lambda x: x.ahead.joint_vel.flatten(1)),
    Row("motion_anchor_pos", 3, 1.0, value=lambda x: x.anchor_pos()),
    Row("motion_anchor_ori", 6, 1.0, value=lambda x: x.anchor_ori()),
    Row("motion_phase", 1, 1.0, value=lambda x: x.ahead.phase.unsqueeze(1)),
))
"""The policy's observation terms in order."""
TERM_NAMES = tuple(t.name for t in TABLE)
