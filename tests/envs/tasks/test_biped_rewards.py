"""The biped reward terms of ``envs/tasks/locomotion/rewards.py``, checked on hand-built states."""

from __future__ import annotations

import math

import torch

from envs.tasks.locomotion import rewards as R
from envs.tasks.rotations import from_yaw
from tests.reward_context import context

MOVE = torch.tensor([[0.5, 0.0, 0.0]])
STAND = torch.zeros(1, 3)


def biped_air(air_time, contact_time, contact, commands, threshold):
    return R.feet_air_time_biped(context(air_time=air_time, contact_time=contact_time, contact=contact,
                                         commands=commands, params=context(air_time_threshold=threshold)))


def clearance(pos, vel, contact, height):
    return R.feet_clearance(context(foot_pos_w=pos, foot_vel_w=vel, contact=contact,
                                    params=context(feet_clearance_height=height)))


def distance(pos, quat, left, right, min_distance):
    return R.feet_distance(context(foot_pos_w=pos, base_quat=quat, left_feet=left, right_feet=right,
                                   params=context(feet_min_distance=min_distance)))


def test_biped_air_time_only_in_single_stance_and_capped():
    air, stance = torch.tensor([[0.0, 0.3]]), torch.tensor([[0.25, 0.0]])
    contact = torch.tensor([[True, False]])
    assert math.isclose(biped_air(air, stance, contact, MOVE, 0.4).item(), 0.25, rel_tol=1e-6)  # min
    assert math.isclose(biped_air(air * 3, stance * 3, contact, MOVE, 0.4).item(), 0.4, rel_tol=1e-6)
    both = torch.tensor([[True, True]])
    assert biped_air(air, stance, both, MOVE, 0.4).item() == 0.0  # double stance
    none = torch.tensor([[False, False]])
    assert biped_air(air, stance, none, MOVE, 0.4).item() == 0.0  # flight
    assert biped_air(air, stance, contact, STAND, 0.4).item() == 0.0  # no linear command


def test_feet_clearance_penalizes_low_moving_swing_feet_only():
    pos = torch.tensor([[[0.0, 0.1, 0.02], [0.0, -0.1, 0.02]]])
    vel = torch.tensor([[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    swing_left = torch.tensor([[False, True]])
    low = clearance(pos, vel, swing_left, 0.12).item()
    assert math.isclose(low, 0.1 ** 2 * math.tanh(2.0), rel_tol=1e-5)  # only the swinging foot
    high = pos.clone()
    high[0, 0, 2] = 0.12
    assert clearance(high, vel, swing_left, 0.12).item() < 1e-12
    assert clearance(pos, torch.zeros_like(vel), swing_left, 0.12).item() == 0.0  # not moving
    assert clearance(pos, vel, torch.ones(1, 2, dtype=torch.bool), 0.12).item() == 0.0  # both in stance


def test_feet_distance_in_the_heading_frame_and_crossing():
    left, right = torch.tensor([0]), torch.tensor([1])
    apart = torch.tensor([[[0.0, 0.1, 0.0], [0.0, -0.1, 0.0]]])  # 0.2 m apart, left on the left
    heading = from_yaw(torch.zeros(1))
    assert distance(apart, heading, left, right, 0.15).item() == 0.0
    close = apart * 0.25  # 0.05 m apart
    assert math.isclose(distance(close, heading, left, right, 0.15).item(), 0.1, rel_tol=1e-5)
    crossed = apart.flip(1)
    assert math.isclose(distance(crossed, heading, left, right, 0.15).item(), 0.35, rel_tol=1e-5)
    # the same 0.2 m-apart feet, seen by a robot facing +y: its left is -x
    turned = torch.tensor([[[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0]]])
    assert distance(turned, from_yaw(torch.tensor([math.pi / 2])), left, right, 0.15).item() < 1e-6
    assert distance(turned, heading, left, right, 0.15).item() > 0.14


def test_base_height_joint_deviation_energy_alive():
    height = context(base_height=torch.tensor([0.85]), params=context(base_height_target=0.95))
    assert math.isclose(R.base_height(height).item(), 0.01, rel_tol=1e-5)
    assert math.isclose(R.joint_deviation(context(joint_offset=torch.tensor([[0.1, -0.2]]))).item(), 0.05, rel_tol=1e-5)
    assert R.joint_deviation(context(joint_offset=torch.zeros(1, 0))).item() == 0.0  # no joints selected
    tau, qd = torch.tensor([[10.0, -5.0]]), torch.tensor([[2.0, 3.0]])
    energy = R.energy(context(joint_torques=tau, joint_vel=qd)).item()
    assert math.isclose(energy, 35.0)  # |20| + |-15|: negative work costs too
    assert torch.equal(R.alive(context(commands=torch.zeros(3, 3))), torch.ones(3))
