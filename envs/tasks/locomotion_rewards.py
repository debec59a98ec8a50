"""Reward terms of velocity tracking (legged_gym's set plus foot slip), as pure functions of tensors.

Each term returns ``[N]`` per-step values before weighting; ``RewardScales`` holds the weights. Keeping them
pure makes each one checkable on hand-built states (tests/test_locomotion_rewards.py).
"""

from __future__ import annotations

import torch


def tracking_lin_vel(cmd: torch.Tensor, lin_vel_b: torch.Tensor, sigma: float) -> torch.Tensor:
    return torch.exp(-torch.sum(torch.square(cmd[:, :2] - lin_vel_b[:, :2]), dim=1) / sigma)


def tracking_ang_vel(cmd: torch.Tensor, ang_vel_b: torch.Tensor, sigma: float) -> torch.Tensor:
    return torch.exp(-torch.square(cmd[:, 2] - ang_vel_b[:, 2]) / sigma)


def lin_vel_z(lin_vel_b: torch.Tensor) -> torch.Tensor:
    return torch.square(lin_vel_b[:, 2])


def ang_vel_xy(ang_vel_b: torch.Tensor) -> torch.Tensor:
    return torch.sum(torch.square(ang_vel_b[:, :2]), dim=1)


def orientation(gravity_b: torch.Tensor) -> torch.Tensor:
    return torch.sum(torch.square(gravity_b[:, :2]), dim=1)


def torques(tau: torch.Tensor) -> torch.Tensor:
    return torch.sum(torch.square(tau), dim=1)


def dof_acc(joint_vel: torch.Tensor, last_joint_vel: torch.Tensor, dt: float) -> torch.Tensor:
    return torch.sum(torch.square((joint_vel - last_joint_vel) / dt), dim=1)


def action_rate(actions: torch.Tensor, last_actions: torch.Tensor) -> torch.Tensor:
    return torch.sum(torch.square(actions - last_actions), dim=1)


def feet_air_time(air_time: torch.Tensor, first_contact: torch.Tensor, cmd: torch.Tensor) -> torch.Tensor:
    """Air time of each foot at its touchdown minus 0.5 s; zero when no linear velocity is commanded."""
    moving = torch.norm(cmd[:, :2], dim=1) > 0.1
    return torch.sum((air_time - 0.5) * first_contact, dim=1) * moving


def feet_slip(foot_vel_w: torch.Tensor, contact: torch.Tensor) -> torch.Tensor:
    """``foot_vel_w [N, 4, 3]``; horizontal speed squared of the feet in contact."""
    return torch.sum(torch.sum(torch.square(foot_vel_w[:, :, :2]), dim=2) * contact, dim=1)


def collision(calf_contact: torch.Tensor) -> torch.Tensor:
    return torch.sum(calf_contact.float(), dim=1)
