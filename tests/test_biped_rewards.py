"""The biped reward terms of ``envs/tasks/locomotion_rewards.py``, checked on hand-built states."""

from __future__ import annotations

import math

import torch

from envs.tasks import locomotion_rewards as R
from envs.tasks.rotations import from_yaw

MOVE = torch.tensor([[0.5, 0.0, 0.0]])
STAND = torch.zeros(1, 3)


def test_biped_air_time_only_in_single_stance_and_capped():
    air, stance = torch.tensor([[0.0, 0.3]]), torch.tensor([[0.25, 0.0]])
    contact = torch.tensor([[True, False]])
    assert math.isclose(R.feet_air_time_biped(air, stance, contact, MOVE, 0.4).item(), 0.25, rel_tol=1e-6)  # min
    assert math.isclose(R.feet_air_time_biped(air * 3, stance * 3, contact, MOVE, 0.4).item(), 0.4, rel_tol=1e-6)
    both = torch.tensor([[True, True]])
    assert R.feet_air_time_biped(air, stance, both, MOVE, 0.4).item() == 0.0  # double stance
    none = torch.tensor([[False, False]])
    assert R.feet_air_time_biped(air, stance, none, MOVE, 0.4).item() == 0.0  # flight
    assert R.feet_air_time_biped(air, stance, contact, STAND, 0.4).item() == 0.0  # no linear command


def test_feet_clearance_penalizes_low_moving_swing_feet_only():
    pos = torch.tensor([[[0.0, 0.1, 0.02], [0.0, -0.1, 0.02]]])
    vel = torch.tensor([[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    swing_left = torch.tensor([[False, True]])
    low = R.feet_clearance(pos, vel, swing_left, 0.12).item()
    assert math.isclose(low, 0.1 ** 2 * math.tanh(2.0), rel_tol=1e-5)  # only the swinging foot
    high = pos.clone()
    high[0, 0, 2] = 0.12
    assert R.feet_clearance(high, vel, swing_left, 0.12).item() < 1e-12
    assert R.feet_clearance(pos, torch.zeros_like(vel), swing_left, 0.12).item() == 0.0  # not moving
    assert R.feet_clearance(pos, vel, torch.ones(1, 2, dtype=torch.bool), 0.12).item() == 0.0  # both in stance


def test_feet_distance_in_the_heading_frame_and_crossing():
    left, right = torch.tensor([0]), torch.tensor([1])
    apart = torch.tensor([[[0.0, 0.1, 0.0], [0.0, -0.1, 0.0]]])  # 0.2 m apart, left on the left
    heading = from_yaw(torch.zeros(1))
    assert R.feet_distance(apart, heading, left, right, 0.15).item() == 0.0
    close = apart * 0.25  # 0.05 m apart
    assert math.isclose(R.feet_distance(close, heading, left, right, 0.15).item(), 0.1, rel_tol=1e-5)
    crossed = apart.flip(1)
    assert math.isclose(R.feet_distance(crossed, heading, left, right, 0.15).item(), 0.35, rel_tol=1e-5)
    # the same 0.2 m-apart feet, seen by a robot facing +y: its left is -x
    turned = torch.tensor([[[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0]]])
    assert R.feet_distance(turned, from_yaw(torch.tensor([math.pi / 2])), left, right, 0.15).item() < 1e-6
    assert R.feet_distance(turned, heading, left, right, 0.15).item() > 0.14


def test_base_height_joint_deviation_energy_alive():
    assert math.isclose(R.base_height(torch.tensor([0.85]), 0.95).item(), 0.01, rel_tol=1e-5)
    assert math.isclose(R.joint_deviation(torch.tensor([[0.1, -0.2]])).item(), 0.05, rel_tol=1e-5)
    assert R.joint_deviation(torch.zeros(1, 0)).item() == 0.0  # no joints selected
    tau, qd = torch.tensor([[10.0, -5.0]]), torch.tensor([[2.0, 3.0]])
    assert math.isclose(R.energy(tau, qd).item(), 35.0)  # |20| + |-15|: negative work costs too
    assert torch.equal(R.alive(torch.zeros(3, 3)), torch.ones(3))
