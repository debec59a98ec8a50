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

_S = OBS_SCALES
TABLE = declared((
    ObsTerm("base_lin_vel", 3, _S["lin_vel"], "noise.lin_vel"),
    ObsTerm("base_ang_vel", 3, _S["ang_vel"], "noise.ang_vel"),
    ObsTerm("projected_gravity", 3, 1.0, "noise.gravity"),
    ObsTerm("joint_pos", "joints", _S["joint_pos"], "noise.joint_pos"),
    ObsTerm("joint_vel", "joints", _S["joint_vel"], "noise.joint_vel"),
    ObsTerm("last_actions", "joints", 1.0),
    ObsTerm("motion_joint_pos", "motion_joints", 1.0),
    ObsTerm("motion_joint_vel", "motion_joints", _S["joint_vel"]),
    ObsTerm("motion_anchor_pos", 3, 1.0),
    ObsTerm("motion_anchor_ori", 6, 1.0),
    ObsTerm("motion_phase", 1, 1.0),
))
"""The policy's observation terms in order."""
TERM_NAMES = tuple(t.name for t in TABLE)


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


def values(robot: Robot, ahead: Ahead, default: torch.Tensor, last_actions: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each term's raw value (``[n, size]``)."""
    rot_t = robot.anchor_rot.transpose(1, 2)
    rel = rot_t @ ahead.anchor_rot
    return {"base_lin_vel": robot.lin_vel_b, "base_ang_vel": robot.ang_vel_b, "projected_gravity": robot.gravity_b,
            "joint_pos": robot.joint_pos - default, "joint_vel": robot.joint_vel, "last_actions": last_actions,
            "motion_joint_pos": (ahead.joint_pos - default).flatten(1), "motion_joint_vel": ahead.joint_vel.flatten(1),
            "motion_anchor_pos": (rot_t @ (ahead.anchor_pos - robot.anchor_pos).unsqueeze(-1)).squeeze(-1),
            "motion_anchor_ori": rel[:, :, :2].transpose(1, 2).flatten(1), "motion_phase": ahead.phase.unsqueeze(1)}
