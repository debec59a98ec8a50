"""Recurrent policies exported with their state as explicit inputs / outputs, run by the torch-free runtimes, and
the Gymnasium observation mask (env.obs_mask) they are trained with."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from apps import gym_sim2sim
from configs.gym_tasks import pendulum_masked
from contract.errors import ConfigError
from deploy.onnx_policy import OnnxPolicy
from envs.gym import GymEnvConfig, GymVecEnv
from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec
from rl_core.evaluation import evaluate
from rl_core.export import PARITY_ATOL, ExportError, check_sequence_parity, export_jit, export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic


def _policy(memory: str, discrete: bool = False, obs_dim: int = 5, seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    spec = ActionSpec(True, 3) if discrete else ActionSpec(False, 2, low=(-1.0, -1.0), high=(1.0, 1.0))
    policy = ActorCritic(obs_dim, None, spec, PolicyConfig(memory=memory, memory_size=16, memory_layers=2))
    policy.update_normalizers(torch.randn(256, obs_dim) * torch.linspace(0.5, 3.0, obs_dim) + 1.0, None)
    return policy.eval()


@pytest.fixture(scope="module")
def lstm_onnx(tmp_path_factory):
    policy = _policy("lstm")
    path = tmp_path_factory.mktemp("rec") / "lstm.onnx"
    err = export_onnx(policy, path, policy_metadata("toy", 3, policy, {}))
    assert err <= PARITY_ATOL
    return policy, path


def test_onnx_lstm_has_state_inputs_outputs_and_metadata(lstm_onnx):
    import onnx

    _, path = lstm_onnx
    model = onnx.load(str(path))
    assert [i.name for i in model.graph.input] == ["obs", "h_in", "c_in"]
    assert [o.name for o in model.graph.output] == ["actions", "h_out", "c_out"]
    for value in list(model.graph.input)[1:] + list(model.graph.output)[1:]:
        dims = value.type.tensor_type.shape.dim
        assert dims[0].dim_param and [d.dim_value for d in dims[1:]] == [2, 16]  # [batch, layers, size]
    rec = OnnxPolicy(path).metadata["recurrent"]
    assert rec["memory"] == "lstm" and rec["state_inputs"] == ["h_in", "c_in"]
    assert rec["state_outputs"] == ["h_out", "c_out"]
    assert rec["state_shape"] == ["batch", 2, 16] and "zeros" in rec["reset"]


def test_onnx_runtime_matches_torch_over_200_steps_with_per_env_resets(lstm_onnx):
    """deploy.OnnxPolicy carries the state between calls and zeroes it per env on reset(done), as torch does."""
    policy, path = lstm_onnx
    runtime = OnnxPolicy(path)
    g = torch.Generator().manual_seed(1)
    B = 4
    state = policy.init_actor_hidden(B)
    worst = 0.0
    with torch.no_grad():
        for _ in range(200):
            obs = torch.randn(B, 5, generator=g) * 2 + 1
            expected, state = policy.act_inference_step(obs, state)
            worst = max(worst, float(np.abs(runtime(obs.numpy()) - expected.numpy()).max()))
            done = torch.rand(B, generator=g) < 0.05
            state.masked_fill_(done.view(1, 1, -1, 1), 0.0)
            runtime.reset(done.numpy())
    assert worst <= 1e-5
    assert state.abs().max() > 0.1  # the state did something


@pytest.mark.parametrize("discrete", [False, True])
def test_torchscript_gru_matches_torch_over_200_steps(tmp_path, discrete):
    policy = _policy("gru", discrete=discrete, seed=2)
    path = tmp_path / "gru.pt"
    assert export_jit(policy, path, {"task": "toy"}) <= PARITY_ATOL
    loaded = torch.jit.load(str(path))
    h = torch.zeros(3, 2, 16)
    state = policy.init_actor_hidden(3)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for _ in range(200):
            obs = torch.randn(3, 5, generator=g)
            actions, h = loaded(obs, h)
            expected, state = policy.act_inference_step(obs, state)
            if discrete:
                assert torch.equal(actions, expected[:, 0].long() if expected.dim() == 2 else expected.long())
            else:
                torch.testing.assert_close(actions, expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(h, state[0].transpose(0, 1), atol=1e-5, rtol=0)


def test_sequence_parity_check_fails_loudly():
    policy = _policy("gru")

    def good(obs, states):
        s = torch.stack([torch.from_numpy(x).transpose(0, 1) for x in states])
        with torch.no_grad():
            a, s = policy.act_inference_step(torch.from_numpy(obs), s)
        return a.numpy(), [s[0].transpose(0, 1).numpy()]

    calls = {"n": 0}

    def drifting(obs, states):
        calls["n"] += 1
        a, s = good(obs, states)
        if calls["n"] > 150:
            s[0] = s[0] + 1e-3  # a state that is not fed back correctly shows up late in a sequence
        return a, s

    assert check_sequence_parity(policy, good, 200, 4, 0, "ok") <= 1e-6
    with pytest.raises(ExportError, match=r"differs from torch.*at step 150 of a 200-step sequence"):
        check_sequence_parity(policy, drifting, 200, 4, 0, "tampered")


def test_obs_mask_drops_entries_and_is_checked():
    full = GymVecEnv(GymEnvConfig(env_id="Pendulum-v1", num_envs=2))
    masked = GymVecEnv(GymEnvConfig(env_id="Pendulum-v1", num_envs=2, obs_mask=(2,)))
    assert full.obs_dims["policy"] == 3 and masked.obs_dims["policy"] == 2
    a, b = full.reset(seed=7)["policy"], masked.reset(seed=7)["policy"]
    torch.testing.assert_close(b, a[:, :2])
    act = torch.zeros(2, 1)
    for _ in range(200):  # through the time limit: final_obs is masked too
        oa, _, _, trunc, ia = full.step(act)
        ob, _, _, _, ib = masked.step(act)
        torch.testing.assert_close(ob["policy"], oa["policy"][:, :2])
    assert bool(trunc.all()) and ib["final_obs"]["policy"].shape == (2, 2)
    torch.testing.assert_close(ib["final_obs"]["policy"], ia["final_obs"]["policy"][:, :2])
    assert masked.export_metadata()["obs_mask"] == [2]
    full.close()
    masked.close()
    for bad in ((3,), (0, 1, 2)):
        with pytest.raises(ConfigError, match=r"env\.obs_mask") as e:
            GymVecEnv(GymEnvConfig(env_id="Pendulum-v1", num_envs=1, obs_mask=bad))
        assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match=r"env\.obs_mask"):
        GymEnvConfig(env_id="Pendulum-v1", obs_mask=(1, 1))


def test_masked_pendulum_export_runs_the_same_in_gymnasium_as_in_evaluation(tmp_path):
    """An exported recurrent policy in the plain Gymnasium loop (mask applied from the metadata, state reset per
    episode) scores what the batched evaluation scores on the same first episode."""
    cfg = pendulum_masked()
    env = GymVecEnv(dataclasses.replace(cfg.env, num_envs=1))
    torch.manual_seed(0)
    policy = ActorCritic.for_env(env, cfg.policy).eval()
    with torch.no_grad():
        policy.actor[-1].weight.mul_(100.0)  # a policy whose actions matter (not ~0 everywhere)
    export_onnx(policy, tmp_path / "p.onnx", policy_metadata("Pendulum-v1-masked", 0, policy, env.export_metadata()))
    expected = evaluate(policy, env, 1, seed=5)["mean_episode_return"]
    env.close()
    got = gym_sim2sim.run(OnnxPolicy(tmp_path / "p.onnx"), 2, seed=5)
    assert got["mean_episode_length"] == 200
    first = gym_sim2sim.run(OnnxPolicy(tmp_path / "p.onnx"), 1, seed=5)["mean_episode_return"]
    assert first == pytest.approx(expected, rel=1e-4)
