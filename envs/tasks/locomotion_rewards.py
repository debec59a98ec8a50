"""Reward terms of velocity tracking (legged_gym's set plus foot slip), as pure functions of tensors.

Each term returns ``[N]`` per-step values before weighting; ``RewardScales`` holds the weights. Keeping them
pure makes each one checkable on hand-built states (tests/test_locomotion_rewards.py). ``TERMS`` is the table
the task uses: term name -> a small function of the explicit tensors in ``RewardInputs``; at start-up the task
checks that it and the weights name the same terms (``check_weights``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from rl_core.errors import UserError


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
    """``foot_vel_w [N, F, 3]``; horizontal speed squared of the feet in contact."""
    return torch.sum(torch.sum(torch.square(foot_vel_w[:, :, :2]), dim=2) * contact, dim=1)


def collision(calf_contact: torch.Tensor) -> torch.Tensor:
    return torch.sum(calf_contact.float(), dim=1)


@dataclass(frozen=True)
class RewardInputs:
    """Everything a reward term may read after a step (``[N, ...]`` tensors on the env device)."""

    commands: torch.Tensor
    """Velocity commands ``[N, 3]`` (vx, vy, yaw rate)."""
    lin_vel_b: torch.Tensor
    """Base linear velocity in the base frame ``[N, 3]``."""
    ang_vel_b: torch.Tensor
    """Base angular velocity in the base frame ``[N, 3]``."""
    gravity_b: torch.Tensor
    """Gravity direction in the base frame ``[N, 3]``."""
    torques: torch.Tensor
    """Actuator forces ``[N, nu]``."""
    joint_vel: torch.Tensor
    """Actuated joint velocities ``[N, J]`` (policy order)."""
    last_joint_vel: torch.Tensor
    """The same, one control step earlier."""
    actions: torch.Tensor
    """This step's (clipped) actions ``[N, J]``."""
    last_actions: torch.Tensor
    """The previous step's actions."""
    air_time: torch.Tensor
    """Seconds each foot has been in the air ``[N, F]``."""
    first_contact: torch.Tensor
    """Feet touching down this step ``[N, F]`` bool."""
    foot_vel_w: torch.Tensor
    """World linear velocity of each foot ``[N, F, 3]``."""
    foot_contact: torch.Tensor
    """Feet on the ground ``[N, F]`` bool."""
    penalized_contact: torch.Tensor
    """Penalized bodies touching the floor ``[N, B]`` bool."""
    dt: float
    """Control period (s)."""
    sigma: float
    """Width of the tracking kernels."""


Term = Callable[[RewardInputs], torch.Tensor]

TERMS: dict[str, Term] = {
    "tracking_lin_vel": lambda x: tracking_lin_vel(x.commands, x.lin_vel_b, x.sigma),
    "tracking_ang_vel": lambda x: tracking_ang_vel(x.commands, x.ang_vel_b, x.sigma),
    "lin_vel_z": lambda x: lin_vel_z(x.lin_vel_b),
    "ang_vel_xy": lambda x: ang_vel_xy(x.ang_vel_b),
    "orientation": lambda x: orientation(x.gravity_b),
    "torques": lambda x: torques(x.torques),
    "dof_acc": lambda x: dof_acc(x.joint_vel, x.last_joint_vel, x.dt),
    "action_rate": lambda x: action_rate(x.actions, x.last_actions),
    "feet_air_time": lambda x: feet_air_time(x.air_time, x.first_contact, x.commands),
    "feet_slip": lambda x: feet_slip(x.foot_vel_w, x.foot_contact),
    "collision": lambda x: collision(x.penalized_contact),
}
"""Reward term name -> its function of the step's tensors."""


def check_weights(weights: Mapping[str, float], terms: Mapping[str, Term] = TERMS) -> None:
    """The weights and the table must name the same terms; otherwise one line names the odd one out."""
    for name in weights:
        if name not in terms:
            raise UserError(f"config error: env.rewards.{name} has no reward term in the table; terms: {', '.join(terms)}")
    for name in terms:
        if name not in weights:
            raise UserError(f"reward term '{name}' has no weight in env.rewards; weights: {', '.join(weights)}")
