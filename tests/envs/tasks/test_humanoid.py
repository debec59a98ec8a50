"""The built-in humanoid: it stands under zero actions, its mirror is consistent, its task's defaults."""

from __future__ import annotations

import dataclasses

import torch

from configs.catalog import get_task
from configs.humanoid import HUMANOID_ENV
from envs.robots.humanoid import HUMANOID
from envs.robots.mirror import foot_pairs, joint_mirror, observation_mirror, twin
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig, NoiseConfig, RandomizationConfig, RewardScales

N = 4


def still_env(robot=HUMANOID, **fields) -> LocomotionEnv:
    """The humanoid with no noise, randomization, pushes or random reset, dropped from its reset height."""
    rnd = RandomizationConfig(friction=(1.0, 1.0), added_base_mass=(0.0, 0.0), gain_scale=(1.0, 1.0),
                              push_interval_s=0.0, init_joint_scale=(1.0, 1.0), init_base_vel=0.0)
    cfg = dataclasses.replace(HUMANOID_ENV, num_envs=N, backend="native", noise=NoiseConfig(scale=0.0),
                              randomization=rnd, randomize_initial_episode_length=False, **fields)
    return LocomotionEnv(cfg, robot)


def test_humanoid_is_h1_g1_sized():
    env = still_env()
    mass = float(env.model.body_subtreemass[env.robot.base_body_id])
    assert 30.0 <= mass <= 50.0
    assert env.num_joints == 12 and env.robot.foot_names == ("left_foot", "right_foot")


def test_the_arms_are_real_joints_held_at_their_pose_outside_the_action_space():
    env = still_env()
    rb = env.robot
    arms = {f"{s}_{j}_joint" for s in ("left", "right") for j in ("shoulder_pitch", "shoulder_roll", "shoulder_yaw",
                                                                 "elbow")}
    assert set(rb.held_joint_names) == arms and rb.held_joint_pos == (0.0,) * 8
    assert env.action_spec.n == 12 and env.model.nu == 20  # a servo on every trained and held joint
    env.reset(seed=0)
    for _ in range(round(2.0 / env.dt)):
        env.step(torch.zeros(N, 12))
    held = env.physics.read().qpos[:, list(rb.held_qpos_adr)]
    assert held.abs().max() < 0.05, held  # the arms stay at their pose while the robot stands


def test_stands_two_seconds_under_zero_actions_with_the_feet_carrying_its_weight():
    env = still_env()
    env.reset(seed=0)
    weight = float(env.model.body_subtreemass[env.robot.base_body_id]) * 9.81
    for _ in range(round(2.0 / env.dt)):
        _, _, term, trunc, _ = env.step(torch.zeros(N, 12))
        assert not term.any() and not trunc.any()
    r = env.physics.read()
    k = env.kinematics(r)
    assert (r.qpos[:, env.robot.base_qpos_adr + 2] > 0.9).all()  # pelvis at standing height (0.97 m at reset)
    assert (k["gravity_b"][:, 2] < -0.95).all()  # upright within about 18 degrees
    feet = k["foot_force"]
    # the last substep's touch readings: both feet on the ground, carrying the weight together
    assert (feet > 0.25 * weight).all()
    assert torch.allclose(feet.sum(1), torch.full((N,), weight), rtol=0.2)


def test_with_h1_like_ankle_gains_it_falls_under_zero_actions():
    """Why the ankles are stiffer than H1 / G1's: at kp 40 the robot tips over its ankles within 4 s."""
    soft = tuple(dataclasses.replace(g, kp=40.0, kd=2.0) if "ankle" in g.joints else g for g in HUMANOID.actuators)
    env = still_env(dataclasses.replace(HUMANOID, actuators=soft))
    env.reset(seed=0)
    fell = torch.zeros(N, dtype=torch.bool)
    for _ in range(round(4.0 / env.dt)):
        fell |= env.step(torch.zeros(N, 12))[2]
    assert fell.all()


def test_mirror_twice_is_identity_and_the_default_pose_is_symmetric():
    env = still_env()
    names = env.robot.joint_names
    m = joint_mirror(names)
    assert names[m.perm[0]] == "right_hip_yaw_joint" and m.sign[0] == -1.0  # yaw flips
    assert names[m.perm[3]] == "right_knee_joint" and m.sign[3] == 1.0  # pitch keeps its sign
    x = torch.randn(5, 12)
    assert torch.equal(m(m(x)), x) and not torch.equal(m(x), x)
    default = env.default_joint_pos.unsqueeze(0)
    assert torch.equal(m(default), default)
    obs_m = observation_mirror(env.obs_layout, env.obs.mirror_rules(), names)
    obs = torch.randn(5, env.obs_dims["policy"])
    assert torch.equal(obs_m(obs_m(obs)), obs) and not torch.equal(obs_m(obs), obs)


def test_mirrored_observation_of_a_mirrored_state():
    """A robot turning left with its left hip rolled out observes the mirror of one turning right with its right
    hip rolled out."""
    env = still_env()
    obs_m = observation_mirror(env.obs_layout, env.obs.mirror_rules(), env.robot.joint_names)
    env.reset(seed=0)
    qpos = env.physics.read().qpos.clone()
    qvel = torch.zeros_like(env.physics.read().qvel)
    roll = env.robot.joint_names.index("left_hip_roll_joint"), env.robot.joint_names.index("right_hip_roll_joint")
    adr = env.robot.joint_qpos_adr
    qpos[:, 3:7] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    qpos[0, adr[roll[0]]], qvel[0, 5], qvel[0, 1] = 0.2, 0.5, 0.3  # left hip out, yaw left, moving left
    qpos[1, adr[roll[1]]], qvel[1, 5], qvel[1, 1] = -0.2, -0.5, -0.3
    env.physics.reset(torch.tensor([True, True, False, False]), qpos, qvel)
    env.commands[0] = torch.tensor([0.5, 0.2, 0.8])
    env.commands[1] = torch.tensor([0.5, -0.2, -0.8])
    r = env.physics.read()
    obs = env.observe(r)["policy"]
    assert torch.allclose(obs_m(obs[:1]), obs[1:2], atol=1e-6)


def test_names_and_foot_pairs():
    assert twin("left_ankle_roll_joint") == "right_ankle_roll_joint" and twin("pelvis") == "pelvis"
    assert foot_pairs(("left_foot", "right_foot")) == ((0,), (1,))
    assert foot_pairs(("FR_foot", "FL_foot")) == ((), ())


def test_humanoid_flat_defaults():
    cfg = get_task("humanoid-flat").default_config().env
    assert isinstance(cfg, LocomotionEnvConfig)
    c = cfg.commands
    assert c.lin_vel_x[0] <= -0.5 and c.lin_vel_x[1] >= 1.0 and c.lin_vel_y[0] <= -0.3 and c.lin_vel_y[1] >= 0.3
    assert c.yaw_rate == (-1.0, 1.0) and c.standing_share > 0
    r = cfg.rewards
    for name in ("feet_air_time_biped", "feet_slip", "feet_clearance", "feet_distance", "base_height", "orientation",
                 "joint_deviation", "action_rate", "torques", "energy"):
        assert getattr(r, name) != 0.0, name
    assert r.feet_air_time == 0.0  # the quadruped's air time (rewarded at every touchdown) is off


def test_biped_terms_are_off_for_the_quadruped():
    r = RewardScales()
    for name in ("feet_air_time_biped", "feet_clearance", "feet_distance", "base_height", "joint_deviation",
                 "energy", "alive"):
        assert getattr(r, name) == 0.0, name
    assert LocomotionEnvConfig().commands.standing_share == 0.0 and LocomotionEnvConfig().min_base_height == 0.0


def test_standing_share_of_commands():
    env = still_env(commands=dataclasses.replace(HUMANOID_ENV.commands, standing_share=0.5, min_lin_vel=0.0))
    env.state.commands = torch.zeros(4000, 3)  # only the command sampler runs, at this size
    env.commands_of.sample(env.state, torch.ones(4000, dtype=torch.bool))
    zero = (env.commands == 0).all(1).float().mean().item()
    assert 0.45 < zero < 0.55


def test_base_below_min_height_terminates():
    """Standing (pelvis at about 0.97 m) is a fall for min_base_height 1.2 and not for the default 0.6."""
    for height, fell in ((1.2, True), (HUMANOID_ENV.min_base_height, False)):
        env = still_env(min_base_height=height)
        env.reset(seed=1)
        for _ in range(5):
            _, _, term, trunc, _ = env.step(torch.zeros(N, 12))
            assert not trunc.any()
            if fell:
                break
        assert bool(term.all()) == fell
