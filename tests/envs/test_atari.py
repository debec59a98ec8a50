"""Atari: the pixel env contract, uint8 storage, the CNN actor-critic, export, and a CPU training smoke test."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

pytest.importorskip("ale_py", reason="Atari tests need the atari extra (ale-py)")

import play
import train
from configs.atari_tasks import atari_config
from contract.errors import ConfigError
from envs.atari import AtariEnvConfig, AtariVecEnv
from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec, Exportable, PixelObservations, VecEnv, obs_dtype, obs_shape
from rl_core.modules.actor_critic import ActorCritic
from rl_core.storage import RolloutStorage
from tests.helpers import transition

CNN = PolicyConfig(encoder="cnn", share_encoder=True, actor_hidden_dims=(), critic_hidden_dims=(), activation="relu",
                   normalize_obs=False)


def _env(n: int = 2, **kw) -> AtariVecEnv:
    return AtariVecEnv(AtariEnvConfig(env_id="BreakoutNoFrameskip-v4", num_envs=n, **kw))


def _play_until_game_over(env: AtariVecEnv, max_steps: int = 5000):
    """Random actions; returns per-step (terminated, raw game score stat, lives) of env 0 until its game ends."""
    rng = np.random.default_rng(0)
    out = []
    for _ in range(max_steps):
        _, rew, term, trunc, info = env.step(torch.as_tensor(rng.integers(0, 4, env.num_envs)))
        assert set(torch.unique(rew).tolist()) <= {-1.0, 0.0, 1.0} or not env.cfg.clip_rewards
        out.append((bool(term[0]), float(info["episode_stats"]["game_score"][0]), int(env._lives[0]), float(rew[0])))
        if not np.isnan(out[-1][1]):
            return out
    raise AssertionError("no game ended")


def test_observations_are_uint8_frame_stacks():
    env = _env()
    try:
        # the contract the learner reads (nothing checks it at run time): pixels, not flat vectors
        assert isinstance(env, VecEnv) and isinstance(env, PixelObservations) and isinstance(env, Exportable)
        obs = env.reset(seed=0)["policy"]
        assert obs.dtype == torch.uint8 and obs.shape == (2, 4, 84, 84)
        assert obs_shape(env, "policy") == (4, 84, 84) and obs_dtype(env) == torch.uint8
        assert env.obs_dims == {"policy": 4 * 84 * 84} and env.action_spec == ActionSpec(discrete=True, n=4)
        nxt = env.step(torch.ones(2, dtype=torch.long))[0]["policy"]
        assert torch.equal(nxt[:, :3], obs[:, 1:])  # the stack shifts by one frame per step
    finally:
        env.close()


def test_lost_life_terminates_the_learner_episode_but_not_the_game():
    env = _env()
    try:
        env.reset(seed=1)
        steps = _play_until_game_over(env)
        terms = [i for i, s in enumerate(steps) if s[0]]
        assert len(terms) == 5  # four lost lives, then the game over
        for i in terms[:-1]:  # the game goes on after a lost life: no score reported, one life fewer
            assert np.isnan(steps[i][1]) and steps[i][2] == steps[i - 1][2] - 1 if i else True
        assert terms[-1] == len(steps) - 1
        game_score = steps[-1][1]
        assert game_score == pytest.approx(sum(s[3] for s in steps))  # Breakout rewards are 1 in the lowest rows
    finally:
        env.close()


def test_evaluation_config_plays_whole_games_with_raw_rewards():
    cfg = AtariEnvConfig(num_envs=2).for_evaluation()
    assert not cfg.terminal_on_life_loss and not cfg.clip_rewards
    env = AtariVecEnv(cfg)
    try:
        env.reset(seed=1)
        steps = _play_until_game_over(env)
        assert [s[0] for s in steps].count(True) == 1 and steps[-1][0]
    finally:
        env.close()


def test_bad_atari_values_are_one_line_config_errors():
    with pytest.raises(ConfigError, match="env.env_id"):
        AtariEnvConfig(env_id="CartPole-v1")
    with pytest.raises(ConfigError, match="env.screen_size"):
        AtariEnvConfig(screen_size=20)
    with pytest.raises(ConfigError, match="policy.normalize_obs"):
        PolicyConfig(encoder="cnn")
    with pytest.raises(ConfigError, match="policy.share_encoder"):
        PolicyConfig(share_encoder=True)
    with pytest.raises(ConfigError, match="policy.encoder"):  # a CNN on vector observations
        ActorCritic(8, None, ActionSpec(True, 2), CNN)
    with pytest.raises(ConfigError, match="policy.encoder"):  # an MLP on images
        ActorCritic((4, 84, 84), None, ActionSpec(True, 2), PolicyConfig())


def test_storage_keeps_pixels_as_uint8():
    s = RolloutStorage(3, 2, torch.device("cpu"))
    frame = torch.randint(0, 256, (2, 4, 84, 84), dtype=torch.uint8)
    z = torch.zeros(2)
    for _ in range(3):
        s.add(transition(frame, None, torch.zeros(2, 1), z, torch.zeros(2, 4), z, z, z.bool(), z.bool(), None))
    assert s.obs.dtype == torch.uint8 and s.obs.shape == (3, 2, 4, 84, 84)
    flat = s.flat()["obs"]
    assert flat.dtype == torch.uint8 and flat.shape == (6, 4, 84, 84) and torch.equal(flat[1], frame[1])


def test_shared_cnn_runs_once_and_is_stored_once():
    policy = ActorCritic((4, 84, 84), None, ActionSpec(True, 4), CNN)
    calls = []
    policy.encoder.register_forward_hook(lambda *a: calls.append(1))
    obs = torch.randint(0, 256, (5, 4, 84, 84), dtype=torch.uint8)
    params, values = policy.params_and_value(obs, obs)
    assert params.shape == (5, 4) and values.shape == (5,) and len(calls) == 1
    assert torch.allclose(params, policy.dist_params(obs)) and torch.allclose(values, policy.value(obs))
    assert not any(k.startswith("critic_encoder") for k in policy.state_dict())
    encoder_ids = {id(p) for p in policy.encoder.parameters()}
    assert not encoder_ids & {id(p) for p in policy.critic_parameters()}  # the shared torso counts as the actor's

    separate = ActorCritic((4, 84, 84), None, ActionSpec(True, 4), dataclasses.replace(CNN, share_encoder=False))
    assert separate.critic_encoder is not None
    assert {id(p) for p in separate.critic_encoder.parameters()} <= {id(p) for p in separate.critic_parameters()}


def test_cnn_scales_pixels_to_unit_range():
    policy = ActorCritic((4, 84, 84), None, ActionSpec(True, 4), CNN)
    enc = policy.encoder
    x = torch.randint(0, 256, (2, 4, 84, 84), dtype=torch.uint8)
    ref = enc.fc(enc.convs(x.float() / 255.0))
    assert torch.allclose(enc(x), ref, atol=1e-5)


def test_cnn_export_takes_uint8_frames(tmp_path):
    from deploy.onnx_policy import OnnxPolicy
    from rl_core.export import export_onnx, policy_metadata

    policy = ActorCritic((4, 84, 84), None, ActionSpec(True, 4), CNN).eval()
    meta = policy_metadata("BreakoutNoFrameskip-v4", 0, policy, {"env_id": "BreakoutNoFrameskip-v4"})
    assert meta["obs_shape"] == [4, 84, 84] and meta["obs_dtype"] == "uint8"
    export_onnx(policy, tmp_path / "p.onnx", meta)  # raises ExportError unless every argmax matches torch
    loaded = OnnxPolicy(tmp_path / "p.onnx")
    obs = torch.randint(0, 256, (3, 4, 84, 84), dtype=torch.uint8)
    assert np.array_equal(loaded(obs.numpy()), policy.act_inference(obs)[:, 0].numpy())


def test_breakout_trains_saves_plays_and_exports_on_the_cpu(tmp_path, capsys):
    """CI smoke test: 2 iterations of the registered task (small), then play.py evaluates, exports, deploys.

    192 steps per env: a random Breakout player loses a life every 25-30 steps, so at least one whole game (5 lives)
    ends and its score reaches summary.json next to the learner's episodes (one per life)."""
    run = tmp_path / "run"
    code = train.main(["--task", "BreakoutNoFrameskip-v4", "--num-envs", "2", "--max-iterations", "2", "--quiet",
                       "--run-dir", str(run), "runner.num_steps_per_env=96", "runner.save_interval=1"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] == 384 and summary["task"] == "BreakoutNoFrameskip-v4"
    assert summary["episodes_in_mean"] >= 5 and 0 < summary["mean_episode_length"] <= 192
    assert 0 <= summary["mean_episode_return"] <= 1  # Breakout's clipped rewards, at most a brick or so per life
    assert summary["mean_game_score"] >= 0  # a game ended: the env's own per-episode value was logged
    code = play.main(["--checkpoint", str(run), "--episodes", "1", "--num-envs", "1",
                      "--json", str(tmp_path / "m.json"),
                      "--export-onnx", str(tmp_path / "b.onnx"), "--sim2sim", str(tmp_path / "b.onnx")])
    out, err = capsys.readouterr()
    assert code == 0, err
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["episodes"] == 1 and m["mean_episode_return"] >= 0 and m["mean_episode_length"] > 10
    assert m["sim2sim"]["episodes"] == 1 and m["sim2sim"]["mean_episode_length"] > 10


def test_default_config_is_cleanrl_ppo_atari():
    cfg = atari_config("BreakoutNoFrameskip-v4")
    a, p, r = cfg.algorithm, cfg.policy, cfg.runner
    assert (cfg.env.num_envs, r.num_steps_per_env, a.num_learning_epochs, a.num_mini_batches) == (8, 128, 4, 4)
    assert (a.learning_rate, a.clip_param, a.entropy_coef, a.max_grad_norm) == (2.5e-4, 0.1, 0.01, 0.5)
    assert p.encoder == "cnn" and p.share_encoder and a.schedule == "linear" and r.max_env_steps == 10_000_000


def test_missing_ale_is_one_line_before_anything_is_written(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ale_py" else real(name, *a))
    code = train.main(["--task", "BreakoutNoFrameskip-v4", "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == "error: Atari tasks need ale-py and opencv: pip install -e '.[atari]'"
    assert not (tmp_path / "run").exists()
