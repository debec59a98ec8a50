"""Reward terms and frame conversions of the locomotion task, checked on hand-built states."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import torch

from envs.tasks.locomotion import rewards as R
from envs.tasks.locomotion.config import RewardParams
from envs.tasks.rotations import from_yaw, rotate_inverse, yaw_of
from tests.reward_context import context as ctx


def test_rotate_inverse_matches_mujoco_rotation_matrix():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(32, 4, generator=g, dtype=torch.float64)
    q = q / q.norm(dim=1, keepdim=True)
    v = torch.randn(32, 3, generator=g, dtype=torch.float64)
    out = rotate_inverse(q, v)
    for i in range(32):
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, q[i].numpy())
        np.testing.assert_allclose(out[i].numpy(), mat.reshape(3, 3).T @ v[i].numpy(), atol=1e-12)


def test_yaw_round_trip():
    yaw = torch.linspace(-3.0, 3.0, 13)
    assert torch.allclose(yaw_of(from_yaw(yaw)), yaw, atol=1e-6)


def test_tracking_is_one_when_perfect_and_decays_with_error():
    cmd = torch.tensor([[1.0, -0.5, 0.3], [1.0, -0.5, 0.3]])
    vel = torch.tensor([[1.0, -0.5, 0.0], [0.5, -0.5, 0.0]])
    ang = torch.tensor([[0.0, 0.0, 0.3], [0.0, 0.0, -0.2]])
    lin = R.tracking_lin_vel(ctx(commands=cmd, lin_vel_b=vel, params=RewardParams(tracking_sigma=0.25)))
    yaw = R.tracking_ang_vel(ctx(commands=cmd, ang_vel_b=ang, params=RewardParams(tracking_sigma=0.25)))
    assert torch.allclose(lin, torch.tensor([1.0, math.exp(-0.25 / 0.25)]))
    assert torch.allclose(yaw, torch.tensor([1.0, math.exp(-0.25 / 0.25)]))


def test_orientation_penalty_of_a_tilted_body():
    tilt = 0.3
    q = torch.tensor([[math.cos(tilt / 2), math.sin(tilt / 2), 0.0, 0.0]])  # roll by 0.3 rad
    g_b = rotate_inverse(q, torch.tensor([[0.0, 0.0, -1.0]]))
    assert torch.allclose(R.orientation(ctx(gravity_b=g_b)), torch.tensor([math.sin(tilt) ** 2]), atol=1e-6)
    level = rotate_inverse(torch.tensor([[1.0, 0.0, 0.0, 0.0]]), torch.tensor([[0.0, 0.0, -1.0]]))
    assert R.orientation(ctx(gravity_b=level)).item() == 0.0


def _landing(air, contact, commands, last=None, params=None):
    """feet_air_time's value after one update of its clocks (dt 0: the clocks keep ``air``), and the clocks."""
    term = R.FeetAirTime()
    last = torch.zeros_like(contact) if last is None else last
    x = ctx(air_time=air.clone(), contact_time=torch.zeros_like(air), last_contacts=last, contact=contact,
            commands=commands, dt=0.0, params=params or RewardParams())
    term.update(x)
    return term(x), x.state


def test_feet_air_time_rewards_long_steps_only_while_moving():
    air = torch.tensor([[0.8, 0.2, 0.0, 0.5]])
    down = torch.tensor([[True, True, False, False]])  # feet 0 and 1 land; foot 2 has no air time
    moving = torch.tensor([[0.5, 0.0, 0.0]])
    standing = torch.tensor([[0.0, 0.0, 0.8]])
    landing, _ = _landing(air, down, moving)
    assert torch.allclose(landing, torch.tensor([0.3 + -0.3]))
    assert _landing(air, down, standing)[0].item() == 0.0
    # a foot down without air time is no landing
    assert torch.allclose(_landing(torch.tensor([[0.9, 0.0, 0.0, 0.0]]), down, moving)[0], torch.tensor([0.4]))
    # a foot down at the last step only lands too (contact_filt): foot 3's 0.9 s adds 0.9 - 0.5
    air = torch.tensor([[0.8, 0.2, 0.0, 0.9]])
    assert torch.allclose(_landing(air, down, moving)[0], torch.tensor([0.3 - 0.3]))
    last = torch.tensor([[False, False, False, True]])
    assert torch.allclose(_landing(air, down, moving, last)[0], torch.tensor([0.3 - 0.3 + 0.4]))


def test_feet_air_time_subtracts_its_air_time_offset_parameter():
    """The 0.5 s is ``RewardParams.air_time_offset`` (legged_gym's value by default): another value, another reward."""
    air = torch.tensor([[0.8, 0.2, 0.0, 0.5]])
    down = torch.tensor([[True, True, False, False]])
    moving = torch.tensor([[0.5, 0.0, 0.0]])
    assert RewardParams().air_time_offset == 0.5
    assert torch.allclose(_landing(air, down, moving, params=RewardParams(air_time_offset=0.2))[0],
                          torch.tensor([0.6 + 0.0]))
    assert torch.allclose(_landing(air, down, moving, params=RewardParams(air_time_offset=0.0))[0],
                          torch.tensor([0.8 + 0.2]))


def test_feet_air_time_owns_its_clocks():
    """The term's state moves with the step: every air clock advances, the contact clocks of the feet down too;
    after the step the landed feet's air clocks restart and the contacts become the last ones."""
    term = R.FeetAirTime()
    air = torch.tensor([[0.8, 0.2, 0.0, 0.5]])
    down = torch.tensor([[True, False, False, True]])
    x = ctx(air_time=air.clone(), contact_time=torch.tensor([[0.0, 0.0, 0.0, 0.3]]),
            last_contacts=torch.tensor([[False, False, True, False]]), contact=down, commands=torch.zeros(1, 3),
            dt=0.1)
    term.update(x)
    assert term.first_contact.tolist() == [[True, False, False, True]]  # foot 2: down before, no air time
    assert torch.allclose(x.state.air_time, air + 0.1)
    assert torch.allclose(x.state.contact_time, torch.tensor([[0.1, 0.0, 0.0, 0.4]]))
    term.settle(x)
    assert torch.allclose(x.state.air_time, torch.tensor([[0.0, 0.3, 0.0, 0.0]]))  # foot 2: down at the last step
    assert x.state.last_contacts.tolist() == down.tolist()
    assert R.TERMS["feet_air_time"] is R.feet_air_time and R.TERMS.owned_states() == (R.FootClocks,)


def test_feet_slip_counts_only_feet_in_contact():
    vel = torch.zeros(1, 4, 3)
    vel[0, 0] = torch.tensor([0.3, 0.4, 1.0])  # in contact: 0.25 (vertical ignored)
    vel[0, 1] = torch.tensor([2.0, 0.0, 0.0])  # in the air: ignored
    contact = torch.tensor([[True, False, True, True]])
    assert torch.allclose(R.feet_slip(ctx(foot_vel_w=vel, contact=contact)), torch.tensor([0.25]))


def test_penalties_on_simple_values():
    assert R.lin_vel_z(ctx(lin_vel_b=torch.tensor([[1.0, 2.0, -0.5]]))).item() == 0.25
    assert R.ang_vel_xy(ctx(ang_vel_b=torch.tensor([[1.0, 2.0, 9.0]]))).item() == 5.0
    assert R.torques(ctx(torques=torch.tensor([[1.0, -2.0]]))).item() == 5.0
    acc = ctx(joint_vel=torch.tensor([[0.2]]), last_joint_vel=torch.tensor([[0.1]]), dt=0.02)
    assert R.dof_acc(acc).item() == pytest_approx(25.0)
    assert R.action_rate(ctx(actions=torch.tensor([[1.0, 1.0]]), last_actions=torch.tensor([[0.0, 3.0]]))).item() == 5.0
    assert R.collision(ctx(penalized_contact=torch.tensor([[True, False, True, False]]))).item() == 2.0


def pytest_approx(x: float):
    import pytest

    return pytest.approx(x, rel=1e-5)
