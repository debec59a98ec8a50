"""How far a robot is from its reference after a step: the squared errors the reward kernels read, and the plain
ones the metrics and terminations read.

Body errors are relative to the anchor (BeyondMimic's): the reference's bodies are moved so that its anchor sits
at the robot's anchor's horizontal position (keeping the reference's height) and turned by the heading between the
two anchors, so a robot that drifted or turned a little is judged by its posture. The anchor's own errors are
global (world frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.motion.kinematics import Poses, rotation_angle, yaw_rotation
from envs.tasks.track.library import Frames


@dataclass(frozen=True)
class Errors:
    """One step's tracking errors ``[N]``."""

    anchor_pos: torch.Tensor
    """Squared distance of the anchor from the reference's (m^2)."""
    anchor_ori: torch.Tensor
    """Squared angle between the anchor's orientation and the reference's (rad^2)."""
    body_pos: torch.Tensor
    """Mean over the tracked bodies of the squared distance from the anchor-relative reference (m^2)."""
    body_ori: torch.Tensor
    """Mean squared angle from the anchor-relative reference orientations (rad^2)."""
    body_lin_vel: torch.Tensor
    """Mean squared linear velocity difference ((m/s)^2)."""
    body_ang_vel: torch.Tensor
    """Mean squared angular velocity difference ((rad/s)^2)."""
    joint_pos: torch.Tensor
    """Mean squared joint angle difference (rad^2)."""
    joint_pos_abs: torch.Tensor
    """Mean absolute joint angle difference (rad): the evaluation's joint-position error."""
    anchor_dist: torch.Tensor
    """Distance of the anchor from the reference's (m): the evaluation's anchor position error."""
    anchor_angle: torch.Tensor
    """Angle between the anchor's orientation and the reference's (rad)."""
    body_dist: torch.Tensor
    """Mean distance of the tracked bodies from the anchor-relative reference (m)."""
    height_gap: torch.Tensor
    """Anchor height minus the reference's, absolute (m)."""
    tilt_gap: torch.Tensor
    """Difference of gravity's vertical component in the anchor's frame and in the reference's (0 to 2)."""


def tracking_errors(robot: Poses, joint_pos: torch.Tensor, ref: Frames, anchor: int) -> Errors:
    """The errors of ``robot`` (its tracked bodies' poses, ``anchor`` the index of the anchor among them) and its
    joints ``[N, J]`` against ``ref``."""
    a_pos, a_rot = robot.pos[:, anchor], robot.rot[:, anchor]
    r_pos, r_rot = ref.body_pos[:, anchor], ref.body_rot[:, anchor]
    turn = yaw_rotation(a_rot @ r_rot.transpose(1, 2))  # [N, 3, 3]
    target = torch.cat([a_pos[:, :2], r_pos[:, 2:]], dim=1)
    rel_pos = target.unsqueeze(1) + ((ref.body_pos - r_pos.unsqueeze(1)) @ turn.transpose(1, 2))
    rel_rot = turn.unsqueeze(1) @ ref.body_rot
    body_sq = (rel_pos - robot.pos).square().sum(-1)
    body_angle = rotation_angle(rel_rot, robot.rot)
    anchor_angle = rotation_angle(r_rot, a_rot)
    anchor_sq = (r_pos - a_pos).square().sum(-1)
    joint_diff = joint_pos - ref.joint_pos
    return Errors(
        anchor_pos=anchor_sq, anchor_ori=anchor_angle.square(), body_pos=body_sq.mean(1),
        body_ori=body_angle.square().mean(1), body_lin_vel=(ref.body_lin_vel - robot.lin_vel).square().sum(-1).mean(1),
        body_ang_vel=(ref.body_ang_vel - robot.ang_vel).square().sum(-1).mean(1),
        joint_pos=joint_diff.square().mean(1), joint_pos_abs=joint_diff.abs().mean(1), anchor_dist=anchor_sq.sqrt(),
        anchor_angle=anchor_angle, body_dist=body_sq.sqrt().mean(1), height_gap=(a_pos[:, 2] - r_pos[:, 2]).abs(),
        tilt_gap=(a_rot[:, 2, 2] - r_rot[:, 2, 2]).abs())
