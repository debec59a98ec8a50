"""The robot-side runtime builds the trainer's observation from the ONNX metadata alone (within 1e-6), drives the
env with its own actions (recurrent state included), and every family's export matches the pinned schema."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
import torch

from configs.catalog import get_task
from configs.gym_tasks import cartpole
from contract import schema
from contract.policy_format import FORMAT
from deploy import sim2sim
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.controller import Controller
from deploy.runtime.robot import RobotState
from envs.gym import GymVecEnv
from envs.tasks.rotations import yaw_of
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from tests.sim2sim_check import assert_sim2sim_observation_matches

LOCOMOTION_KEYS = ["action_clip", "action_dim", "action_scale", "action_type", "actions", "base_height",
                   "base_joint", "collisions", "command_min_lin_vel", "command_ranges", "command_resample_s",
                   "contact_force_threshold", "control_dt", "decimation", "default_joint_pos", "episode_length_s",
                   "foot_names", "format", "held_joint_names", "held_joint_pos", "held_kd", "held_kp",
                   "held_torque_limits", "iteration", "joint_names",
                   "joint_pos_limits", "kd", "kp", "obs_dim", "obs_dtype", "obs_layout", "obs_scales", "obs_shape",
                   "robot", "scene_mjb", "sim_dt", "success_distance", "task", "task_family",
                   "termination_contact_sensors", "torque_limits", "velocity_limits"]
"""The pinned keys of a locomotion export of format 2.4 (a change here is a schema change: docs and version)."""
GYM_KEYS = ["action_dim", "action_offset", "action_type", "actions", "clip_actions", "env_id", "format", "iteration",
            "max_episode_steps", "obs_dim", "obs_dtype", "obs_layout", "obs_mask", "obs_shape", "task", "task_family"]


def _export(name: str, tmp_path_factory, **env_changes):
    spec = get_task(name)
    cfg = spec.default_config()
    env_cfg = dataclasses.replace(cfg.env, num_envs=1, backend="native",
                                  noise=dataclasses.replace(cfg.env.noise, scale=0.0), **env_changes)
    env = spec.make_env(env_cfg.for_evaluation(), torch.device("cpu"))
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], env.obs_dims.get("critic"), env.action_spec, cfg.policy).eval()
    dim = env.obs_dims["policy"]
    if cfg.policy.normalize_obs:  # non-trivial statistics: the export must carry them
        policy.update_normalizers(torch.randn(256, dim) * 0.5 + torch.linspace(-1, 1, dim), None)
    path = tmp_path_factory.mktemp(name) / "policy.onnx"
    export_onnx(policy, path, policy_metadata(name, 1, policy, env.export_metadata(), env.obs_frames))
    return env, path


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    return _export("quadruped-flat", tmp_path_factory)


@pytest.fixture(scope="module")
def blind(tmp_path_factory):
    return _export("quadruped-flat-blind", tmp_path_factory)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """The quadruped without base velocity, reading its last 3 observations."""
    return _export("quadruped-flat", tmp_path_factory, obs_history=3, policy_exclude=("base_lin_vel",))


@pytest.fixture(scope="module")
def humanoid(tmp_path_factory):
    return _export("humanoid-flat", tmp_path_factory)


@pytest.fixture(scope="module")
def rough(tmp_path_factory):
    terrain = dataclasses.replace(get_task("quadruped-rough").default_config().env.terrain, levels=2, columns=5,
                                  border=2.0)
    return _export("quadruped-rough", tmp_path_factory, terrain=terrain)


def robot_state(env, sdk_order: list[str]) -> RobotState:
    """What a robot's sensors report in the env's current state (float64, joints in ``sdk_order``): the IMU
    quaternion and gyro, a perfect velocity estimate, and the height of the base above the ground at the scan
    points when the env scans."""
    r, rb = env.physics.read(), env.robot
    qpos, qvel = r.qpos[0].double().numpy(), r.qvel[0].double().numpy()
    b, v = rb.base_qpos_adr, rb.base_dof_adr
    rot = np.empty(9)
    mujoco.mju_quat2Mat(rot, qpos[b + 3:b + 7])
    lin = rot.reshape(3, 3).T @ qvel[v:v + 3]
    names = rb.joint_names + rb.held_joint_names  # a robot reports its held joints too
    model = env.model
    qadr = [model.joint(n).qposadr[0] for n in names]
    dadr = [model.joint(n).dofadr[0] for n in names]
    pick = [names.index(n) for n in sdk_order]
    scan = None
    if env.cfg.height_scan.enabled:
        scan = env.ground.scan(r.qpos[:, b:b + 3], yaw_of(r.qpos[:, b + 3:b + 7]))[0].double().numpy()
    return RobotState(0.0, qpos[np.array(qadr)[pick]], qvel[np.array(dadr)[pick]], qpos[b + 3:b + 7],
                      qvel[v + 3:v + 6], lin, scan)


def assert_runtime_drives_env_like_trainer(env, path, steps: int) -> None:
    """The runtime, with the robot's joints in reversed order, observes the env's state; its observation equals
    the env's within 1e-6 and its actions (which step the env) equal the exported policy's on the env's own
    observations (a second ``OnnxPolicy`` carrying its own recurrent state) within 1e-5. With an observation
    history the runtime builds one frame (the env's newest) and the file carries the past ones."""
    meta = OnnxPolicy(path).metadata
    width = meta["obs_dim"]
    sdk_order = list(reversed(meta["joint_names"] + meta["held_joint_names"]))  # humanoid-flat holds its arms
    ctl = Controller(OnnxPolicy(path), sdk_order)
    reference = OnnxPolicy(path)
    obs = env.reset(seed=4)["policy"][:, -width:]
    worst = 0.0
    for t in range(steps):
        got = ctl.observe(robot_state(env, sdk_order), env.commands[0].double().numpy())
        err = float(np.abs(got.astype(np.float64) - obs[0].double().numpy()).max())
        worst = max(worst, err)
        assert err <= 1e-6, f"step {t}: runtime observation differs from the env's by {err:.3g}"
        action = ctl.infer(got)
        np.testing.assert_allclose(action, np.clip(reference(obs.numpy())[0], -ctl.clip, ctl.clip), atol=1e-5)
        obs, _, term, trunc, _ = env.step(torch.tensor(action[None], dtype=torch.float32))
        obs = obs["policy"][:, -width:]
        assert not bool(term | trunc), f"the episode ended at step {t}"
    assert worst > 0 or steps == 0  # float32 env vs float64 runtime: the comparison saw real values


def test_runtime_observation_equals_the_trainers_quadruped_flat(flat):
    env, path = flat
    assert_runtime_drives_env_like_trainer(env, path, steps=30)


def test_runtime_observation_equals_the_trainers_humanoid_flat(humanoid):
    env, path = humanoid
    assert_runtime_drives_env_like_trainer(env, path, steps=20)


def test_runtime_observation_equals_the_trainers_rough_with_height_map(rough):
    env, path = rough
    assert OnnxPolicy(path).metadata["obs_layout"][-1] == ["height_scan", 187]
    assert_runtime_drives_env_like_trainer(env, path, steps=20)


def test_runtime_observation_and_recurrent_state_equal_the_trainers_blind(blind):
    env, path = blind
    meta = OnnxPolicy(path).metadata
    assert meta["recurrent"]["memory"] == "lstm" and "base_lin_vel" not in [n for n, _ in meta["obs_layout"]]
    assert_runtime_drives_env_like_trainer(env, path, steps=30)


def test_runtime_and_history_state_equal_the_trainers_with_an_observation_history(history):
    env, path = history
    meta = OnnxPolicy(path).metadata
    rec = meta["recurrent"]
    frame = meta["obs_dim"]
    assert env.obs_dims["policy"] == 3 * frame and frame == sum(n for _, n in meta["obs_layout"]) == 45
    assert rec["memory"] == "history" and rec["layers"] == 2 and rec["size"] == frame
    assert rec["state_inputs"] == ["history_in"] and "base_lin_vel" not in [n for n, _ in meta["obs_layout"]]
    assert_runtime_drives_env_like_trainer(env, path, steps=30)
    assert_sim2sim_observation_matches(env, path, steps=20)
    metrics = sim2sim.run(OnnxPolicy(path), episodes=2, seed=0)  # the file carries its history through episodes
    assert metrics["episodes"] == 2 and np.isfinite(metrics["lin_vel_tracking_error"])


def test_each_locomotion_export_matches_the_pinned_schema(flat, blind, history, humanoid, rough):
    for _, path in (flat, blind, history, humanoid, rough):
        meta = OnnxPolicy(path).metadata
        assert meta["format"] == FORMAT == "legged-mjx-policy/2.4"
        assert schema.problems(meta) == [], path
        optional = {"recurrent", "height_scan", "terrain"}
        assert sorted(set(meta) - optional) == LOCOMOTION_KEYS
        assert len(meta["joint_pos_limits"]) == len(meta["joint_names"]) == len(meta["kp"])
    assert "recurrent" in OnnxPolicy(blind[1]).metadata
    rough_meta = OnnxPolicy(rough[1]).metadata
    assert {"height_scan", "terrain"} <= set(rough_meta)


def test_gym_export_matches_the_pinned_schema(tmp_path):
    cfg = cartpole()
    env = GymVecEnv(dataclasses.replace(cfg.env, num_envs=1))
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy).eval()
    export_onnx(policy, tmp_path / "c.onnx", policy_metadata("CartPole-v1", 0, policy, env.export_metadata()))
    env.close()
    meta = OnnxPolicy(tmp_path / "c.onnx").metadata
    assert schema.problems(meta) == [] and sorted(meta) == GYM_KEYS


def test_schema_problems_name_missing_unknown_and_mistyped_keys(flat):
    meta = dict(OnnxPolicy(flat[1]).metadata)
    del meta["kp"]
    meta["robot_xml"] = "x.xml"
    meta["kd"] = 0.5
    assert sorted(schema.problems(meta)) == ["key 'kd' is not list[number]: '0.5'", "missing key 'kp'",
                                             "unknown key 'robot_xml'"]
