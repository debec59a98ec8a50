"""Reward terms of velocity tracking (legged_gym's set plus foot slip, and biped terms), as pure functions of tensors.

Each term returns ``[N]`` per-step values before weighting; ``RewardScales`` holds the weights. Keeping them
pure makes each one checkable on hand-built states (tests/test_locomotion_rewards.py). ``TERMS`` is the table
the task uses: term name -> a small function of the explicit tensors in ``RewardInputs``; at start-up the task
checks that it and the weights name the same terms (``check_weights``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from envs.tasks.locomotion_config import RewardParams
from envs.tasks.rotations import yaw_of
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


def feet_air_time_biped(air_time: torch.Tensor, contact_time: torch.Tensor, contact: torch.Tensor,
                        cmd: torch.Tensor, threshold: float) -> torch.Tensor:
    """Single stance only: the shorter of the stance foot's contact time and the swing foot's air time, capped at
    ``threshold``; zero in double stance, in flight and when no linear velocity is commanded (Isaac Lab's)."""
    in_mode = torch.where(contact, contact_time, air_time)
    single = torch.sum(contact.int(), dim=1) == 1
    reward = torch.where(single.unsqueeze(1), in_mode, torch.zeros_like(in_mode)).min(dim=1).values
    moving = torch.norm(cmd[:, :2], dim=1) > 0.1
    return reward.clamp(max=threshold) * moving


def feet_clearance(foot_pos_w: torch.Tensor, foot_vel_w: torch.Tensor, contact: torch.Tensor,
                   height: float) -> torch.Tensor:
    """Swing feet away from ``height``, weighted by how fast they move horizontally: (z - h)^2 tanh(2 |v_xy|)."""
    err = torch.square(foot_pos_w[:, :, 2] - height)
    speed = torch.tanh(2.0 * torch.norm(foot_vel_w[:, :, :2], dim=2))
    return torch.sum(err * speed * ~contact, dim=1)


def feet_distance(foot_pos_w: torch.Tensor, base_quat: torch.Tensor, left: torch.Tensor, right: torch.Tensor,
                  min_distance: float) -> torch.Tensor:
    """How far each left foot is less than ``min_distance`` to the left of its right foot, in the heading frame
    (a crossed pair counts its whole overlap); summed over the pairs."""
    d = foot_pos_w[:, left, :2] - foot_pos_w[:, right, :2]  # [N, P, 2]
    yaw = yaw_of(base_quat).unsqueeze(1)
    sideways = -torch.sin(yaw) * d[:, :, 0] + torch.cos(yaw) * d[:, :, 1]
    return torch.sum((min_distance - sideways).clamp(min=0.0), dim=1)


def base_height(height: torch.Tensor, target: float) -> torch.Tensor:
    return torch.square(height - target)


def joint_deviation(offset: torch.Tensor) -> torch.Tensor:
    """``offset [N, K]``: selected joints minus their default angles."""
    return torch.sum(torch.square(offset), dim=1)


def energy(joint_torques: torch.Tensor, joint_vel: torch.Tensor) -> torch.Tensor:
    return torch.sum(torch.abs(joint_torques * joint_vel), dim=1)


def alive(commands: torch.Tensor) -> torch.Tensor:
    return torch.ones_like(commands[:, 0])


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
    contact_time: torch.Tensor
    """Seconds each foot has been on the ground ``[N, F]`` (0 in the air)."""
    foot_pos_w: torch.Tensor
    """World position of each foot's sensor site ``[N, F, 3]``."""
    base_quat: torch.Tensor
    """Base orientation ``[N, 4]`` (w, x, y, z)."""
    base_height: torch.Tensor
    """Base height ``[N]`` (m)."""
    joint_offset: torch.Tensor
    """The ``RewardParams.deviation_joints`` minus their default angles ``[N, K]``."""
    joint_torques: torch.Tensor
    """Servo torque of each actuated joint ``[N, J]`` (policy order)."""
    left_feet: torch.Tensor
    """Foot columns of the left feet, paired with ``right_feet`` (``envs/robots/mirror.py``)."""
    right_feet: torch.Tensor
    """Foot columns of the right feet."""
    dt: float
    """Control period (s)."""
    sigma: float
    """Width of the tracking kernels."""
    params: RewardParams
    """Targets and thresholds of the terms."""


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
    "feet_air_time_biped": lambda x: feet_air_time_biped(x.air_time, x.contact_time, x.foot_contact, x.commands,
                                                         x.params.air_time_threshold),
    "feet_clearance": lambda x: feet_clearance(x.foot_pos_w, x.foot_vel_w, x.foot_contact, x.params.feet_clearance_height),
    "feet_distance": lambda x: feet_distance(x.foot_pos_w, x.base_quat, x.left_feet, x.right_feet,
                                             x.params.feet_min_distance),
    "base_height": lambda x: base_height(x.base_height, x.params.base_height_target),
    "joint_deviation": lambda x: joint_deviation(x.joint_offset),
    "energy": lambda x: energy(x.joint_torques, x.joint_vel),
    "alive": lambda x: alive(x.commands),
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
