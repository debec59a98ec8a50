"""The reaching task (``arm-reach``, ``envs/tasks/reach/``): the VecEnv contract, divergence, exact resume, the
observation table against the export and sim2sim's observation, export + sim2sim from the ONNX file alone, and
(slow) learning to the success threshold."""

from __future__ import annotations

import dataclasses
import io

import mujoco
import numpy as np
import pytest
import torch

from apps import sim2sim
from configs.catalog import get_task
from configs.reach import reach_config
from contract import schema
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.sim2sim_reach import PlainMujocoArm
from envs.tasks.reach import ReachEnv, ReachEnvConfig, observations, rewards
from envs.tasks.reach.config import TargetConfig
from rl_core.env_api import Checkpointable, Exportable, VecEnv
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from rl_core.runner import OnPolicyRunner

REACH_KEYS = ["action_clip", "action_dim", "action_scale", "action_type", "actions", "base_pos", "base_rot",
              "control_dt", "decimation", "default_joint_pos", "episode_length_s", "fingertip_site", "format",
              "init_joint_noise", "iteration", "joint_names", "joint_pos_limits", "kd", "kp", "obs_dim", "obs_dtype",
              "obs_layout", "obs_scales", "obs_shape", "robot", "scene_mjb", "shoulder_pos", "sim_dt",
              "success_radius", "target_ranges", "target_site", "task", "task_family", "torque_limits"]
"""The pinned keys of a reach export (a change here is a schema change: docs/deploy.md and the version)."""
SUCCESS_FINAL_DISTANCE = 0.02
"""The learning threshold (m): mean distance of the fingertip from its target at the end of an episode."""


def make(num_envs: int = 8, **fields) -> ReachEnv:
    return ReachEnv(ReachEnvConfig(num_envs=num_envs, backend="native", **fields))


def test_registered_with_a_small_mlp_and_one_torch_thread_on_the_cpu():
    cfg = get_task("arm-reach").default_config()
    assert isinstance(cfg.env, ReachEnvConfig) and cfg.policy.actor_hidden_dims == (64, 64)
    assert cfg == reach_config() and reach_config(gpu=False).runner.torch_threads == 1


def test_a_bad_config_value_is_one_line_naming_the_field():
    with pytest.raises(UserError, match=r"env\.targets\.radius=\[0\.1, 0\.9\] is not allowed"):
        ReachEnvConfig(targets=TargetConfig(radius=(0.1, 0.9)))
    with pytest.raises(UserError, match="env.rewards.reach_far has no reward term"):
        rewards.TERMS.check({"reach_far": 1.0})


def test_vec_env_contract_and_time_out_truncation():
    env = make(num_envs=6, episode_length_s=0.2, randomize_initial_episode_length=False)
    assert isinstance(env, VecEnv) and isinstance(env, Checkpointable) and isinstance(env, Exportable)
    obs = env.reset(seed=0)
    assert obs["policy"].shape == (6, env.obs_dims["policy"]) == (6, 18) and obs["policy"].dtype == torch.float32
    g = torch.Generator().manual_seed(0)
    for t in range(1, 11):
        obs, rew, term, trunc, info = env.step(torch.randn(6, 4, generator=g))
        assert rew.shape == (6,) and rew.dtype == torch.float32 and term.dtype == trunc.dtype == torch.bool
        assert not term.any() and not info["invalid"].any()  # episodes end by their time-out only
        assert bool(trunc.all()) == (t == 10) and torch.isfinite(obs["policy"]).all()
        stats = info["episode_stats"]
        assert torch.isfinite(stats["final_distance"]).all() == (t == 10) and info["metrics"]["distance"].shape == (6,)
    final = info["final_obs"]
    assert final is not None and not torch.equal(final["policy"], obs["policy"])  # reset after the final one
    assert set(stats["success"].tolist()) <= {0.0, 1.0}
    assert {"rew_reach", "rew_reach_fine", "rew_action_rate", "rew_joint_vel", "distance"} <= set(info["log"])


def test_targets_are_redrawn_every_resample_s_and_lie_in_reach():
    env = make(num_envs=64, randomize_initial_episode_length=False)
    env.reset(seed=1)
    first = env.state.target.clone()
    shoulder = torch.tensor(env.arm.shoulder)
    assert ((first - shoulder).norm(dim=1) <= 0.5 + 1e-6).all() and (first[:, 2] >= 0.05 - 1e-6).all()
    for _ in range(env.resample_steps - 1):
        env.step(torch.zeros(64, 4))
    assert torch.equal(env.state.target, first)
    env.step(torch.zeros(64, 4))
    assert not torch.isclose(env.state.target, first).all(dim=1).any()


def test_a_planted_nan_or_a_runaway_joint_is_invalid_terminated_and_zeroed():
    env = make(num_envs=4)
    env.reset(seed=0)
    qvel = env.physics.read().qvel.clone()
    qvel[1, 0] = float("nan")
    qvel[2, 0] = 20.0 * env.cfg.max_joint_vel  # the servos slow it 7-fold within the step: still beyond
    env.physics.set_velocity(torch.tensor([False, True, True, False]), qvel)
    obs, rew, term, trunc, info = env.step(torch.zeros(4, 4))
    assert info["invalid"].tolist() == [False, True, True, False] == term.tolist()
    assert not trunc[1:3].any() and (rew[1:3] == 0).all() and torch.isfinite(obs["policy"]).all()
    assert torch.isnan(info["episode_stats"]["success"][1:3]).all()  # never a success
    assert info["log"]["diverged"].item() == 0.5


def test_random_actions_stay_far_below_the_divergence_bound():
    """Uniform actions over the whole clip range (bang-bang servo targets): the joints stay below 40 rad/s, well
    inside ``max_joint_vel`` (100 rad/s), and nothing is flagged."""
    env = make(num_envs=64)
    env.reset(seed=0)
    g = torch.Generator().manual_seed(0)
    fastest = 0.0
    for _ in range(100):
        _, _, _, _, info = env.step((torch.rand(64, 4, generator=g) * 2 - 1) * env.cfg.clip_actions)
        fastest = max(fastest, env.physics.read().qvel.abs().max().item())
        assert not info["invalid"].any()
    assert fastest < 0.4 * env.cfg.max_joint_vel, fastest


def test_fingertip_kinematics_match_mujoco():
    env = make(num_envs=16)
    env.reset(seed=3)
    qpos = env.physics.read().qpos
    data = mujoco.MjData(env.model)
    tips = env.fingertip()
    for i in range(16):
        data.qpos[:] = qpos[i].double().numpy()
        mujoco.mj_kinematics(env.model, data)
        assert np.abs(data.site_xpos[env.arm.fingertip_site_id] - tips[i].numpy()).max() < 1e-5


def test_the_filmed_target_follows_the_target_and_the_caption_tells_the_distance():
    env = make(num_envs=2)
    env.reset(seed=4)
    model = env.render_model(1)
    site = env.arm.target_site_id
    assert model is not env.model and np.allclose(model.site_pos[site], env.state.target[1].numpy())
    env.state.target = env.state.target + 0.01
    assert "distance" in env.caption(1) and np.allclose(model.site_pos[site], env.state.target[1].numpy())
    assert not np.allclose(env.model.site_pos[site], model.site_pos[site])


def _rollout(env: ReachEnv, actions: list[torch.Tensor]) -> list[torch.Tensor]:
    out = []
    for a in actions:
        obs, rew, term, trunc, _ = env.step(a)
        out += [obs["policy"].clone(), rew.clone(), term.clone(), trunc.clone()]
    return out


def test_exact_resume_from_state_dict():
    g = torch.Generator().manual_seed(5)
    actions = [torch.randn(8, 4, generator=g) for _ in range(150)]  # past a resample and some time-outs
    a = make(episode_length_s=1.0)
    a.reset(seed=7)
    _rollout(a, actions[:60])
    buffer = io.BytesIO()  # as a checkpoint: on the CPU, state_dict() holds the live task tensors
    torch.save(a.state_dict(), buffer)
    expected = _rollout(a, actions[60:])
    b = make(episode_length_s=1.0)
    b.reset(seed=99)
    buffer.seek(0)
    b.load_state_dict(torch.load(buffer, weights_only=True))
    got = _rollout(b, actions[60:])
    assert all(torch.equal(x, y) for x, y in zip(expected, got, strict=True))


def test_observation_table_export_and_sim2sim_observation_agree():
    env = make(num_envs=1, noise=dataclasses.replace(ReachEnvConfig().noise, scale=0.0))
    meta = env.export_metadata()
    assert meta["obs_layout"] == [[t.name, 4 if t.size == "joints" else t.size] for t in observations.TABLE]
    assert meta["obs_scales"] == {t.name: t.scale for t in observations.TABLE}
    assert schema.family(meta) == "reach"
    arm = PlainMujocoArm(meta)
    obs = env.reset(seed=2)
    g = torch.Generator().manual_seed(2)
    for _ in range(20):
        r = env.physics.read()
        arm.data.qpos[:] = r.qpos[0].double().numpy()
        arm.data.qvel[:] = r.qvel[0].double().numpy()
        mujoco.mj_kinematics(arm.model, arm.data)
        arm.target = env.state.target[0].double().numpy()
        arm.last_action = env.state.last_actions[0].double().numpy()
        assert np.abs(arm.observe() - obs["policy"][0].double().numpy()).max() < 1e-5
        obs = env.step(torch.randn(1, 4, generator=g))[0]


def test_export_and_sim2sim_from_the_onnx_file_alone(tmp_path):
    cfg = get_task("arm-reach").default_config()
    env = make(num_envs=1)
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy).eval()
    path = tmp_path / "reach.onnx"
    export_onnx(policy, path, policy_metadata("arm-reach", 3, policy, env.export_metadata()))
    meta = OnnxPolicy(path).metadata
    assert schema.problems(meta) == [] and sorted(meta) == REACH_KEYS
    out = sim2sim.run(path, episodes=2, seed=0)
    assert out["task"] == "arm-reach" and out["runtime"] == "onnxruntime in plain MuJoCo"
    assert out["episodes"] == 2 and out["mean_episode_length"] == 200 and 0.0 <= out["final_distance"] < 1.2


def test_schema_refuses_a_reach_file_without_its_keys(tmp_path):
    env = make(num_envs=1)
    meta = env.export_metadata()
    del meta["fingertip_site"]
    meta["foot_names"] = []
    problems = schema.problems(meta)
    assert "missing key 'fingertip_site'" in problems and "unknown key 'foot_names'" in problems


@pytest.mark.slow
def test_default_config_learns_to_reach_within_two_centimetres(tmp_path):
    """The default command's config (seed 1): the mean final distance of the last episodes is below 2 cm."""
    cfg = get_task("arm-reach").default_config()
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=1))
    env = ReachEnv(cfg.env)
    summary = OnPolicyRunner(env, cfg, task="arm-reach", quiet=True).learn()
    assert summary["mean_final_distance"] < SUCCESS_FINAL_DISTANCE, summary
    assert summary["mean_success"] > 0.9, summary
