"""ONNX / TorchScript export: parity with torch at several batch sizes, metadata, and the torch-free runtimes."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from configs.catalog import get_task
from configs.gym_tasks import cartpole
from configs.quadruped import FLAT_QUADRUPED
from deploy.onnx_policy import OnnxPolicy
from envs.gym import GymVecEnv
from envs.tasks.locomotion import LocomotionEnv
from rl_core.export import ExportError, check_parity, export_jit, export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from tests.sim2sim_check import assert_sim2sim_observation_matches

ROOT = Path(__file__).resolve().parents[2]


def _policy(env, cfg, seed: int = 0) -> ActorCritic:
    """A random policy whose normalizer has non-trivial statistics (so the export must carry them)."""
    torch.manual_seed(seed)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy)
    dim = env.obs_dims["policy"]
    policy.update_normalizers(torch.randn(512, dim) * torch.linspace(0.1, 5.0, dim) + torch.linspace(-2, 2, dim), None)
    return policy.eval()


@pytest.fixture(scope="module")
def quadruped():
    cfg = get_task("quadruped-flat").default_config()
    env_cfg = dataclasses.replace(cfg.env, num_envs=1, backend="native",
                                  noise=dataclasses.replace(cfg.env.noise, scale=0.0))
    env = LocomotionEnv(env_cfg.for_evaluation(), FLAT_QUADRUPED)
    return env, _policy(env, cfg)


@pytest.fixture(scope="module")
def quadruped_onnx(quadruped, tmp_path_factory):
    env, policy = quadruped
    path = tmp_path_factory.mktemp("export") / "policy.onnx"
    export_onnx(policy, path, policy_metadata("quadruped-flat", 7, policy, env.export_metadata()))
    return path


@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_onnx_matches_torch_at_any_batch_size(quadruped, quadruped_onnx, batch):
    _, policy = quadruped
    obs = torch.randn(batch, 48) * 3.0
    actions = OnnxPolicy(quadruped_onnx)(obs.numpy())
    assert actions.shape == (batch, 12) and actions.dtype == np.float32
    with torch.no_grad():
        expected = policy.act_inference(obs).numpy()
    assert np.abs(actions - expected).max() <= 1e-5


def test_onnx_metadata_describes_the_robot_interface(quadruped_onnx):
    meta = OnnxPolicy(quadruped_onnx).metadata
    assert meta["format"] == "legged-mjx-policy/2.4" and meta["task"] == "quadruped-flat" and meta["iteration"] == 7
    assert meta["obs_dim"] == 48 and meta["action_dim"] == 12 and meta["action_type"] == "continuous"
    assert sum(n for _, n in meta["obs_layout"]) == 48
    assert meta["obs_scales"]["base_ang_vel"] == 0.25 and meta["obs_scales"]["commands"] == [2.0, 2.0, 0.25]
    assert meta["joint_names"][0] == "FR_hip_joint" and len(meta["default_joint_pos"]) == 12
    assert meta["format"] == "legged-mjx-policy/2.4" and meta["action_scale"] == [0.25] * 12
    assert meta["kp"] == [20.0] * 12 and meta["kd"] == [0.5] * 12
    assert meta["torque_limits"][:3] == [23.7, 23.7, 35.55] and meta["base_joint"] == "root"
    assert meta["foot_names"] == ["FR_foot", "FL_foot", "RR_foot", "RL_foot"] and "scene_mjb" in meta
    assert meta["control_dt"] == pytest.approx(0.02) and meta["decimation"] == 2  # FLAT_QUADRUPED: 2 x 0.01 s
    import onnx

    model = onnx.load(str(quadruped_onnx))
    assert [i.name for i in model.graph.input] == ["obs"] and [o.name for o in model.graph.output] == ["actions"]
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param  # dynamic batch axis


def test_torchscript_export_matches_and_carries_metadata(quadruped, tmp_path):
    env, policy = quadruped
    path = tmp_path / "policy.pt"
    assert export_jit(policy, path, {"task": "quadruped-flat", "kp": 20.0}) <= 1e-5
    extra = {"metadata.json": ""}
    loaded = torch.jit.load(str(path), _extra_files=extra)
    assert json.loads(extra["metadata.json"])["kp"] == 20.0
    obs = torch.randn(5, 48)
    with torch.no_grad():
        assert torch.allclose(loaded(obs), policy.act_inference(obs), atol=1e-5)


def test_discrete_export_outputs_the_argmax_index(tmp_path):
    cfg = cartpole()
    env = GymVecEnv(dataclasses.replace(cfg.env, num_envs=1))
    policy = _policy(env, cfg, seed=3)
    path = tmp_path / "cartpole.onnx"
    export_onnx(policy, path, policy_metadata("CartPole-v1", 0, policy, env.export_metadata()))
    env.close()
    obs = torch.randn(300, 4) * 2.0
    actions = OnnxPolicy(path)(obs.numpy())
    assert actions.shape == (300,) and actions.dtype == np.int64
    with torch.no_grad():
        assert (actions == policy.act_inference(obs)[:, 0].long().numpy()).all()
    assert 0 < actions.mean() < 1  # both actions occur: the comparison means something


def test_parity_check_fails_loudly(quadruped):
    _, policy = quadruped
    obs = torch.randn(10, 48)
    with torch.no_grad():
        actions = policy.act_inference(obs).numpy()
    check_parity(policy, actions, obs, "ok")
    actions[3, 5] += 1e-4
    with pytest.raises(ExportError, match="differs from torch by"):
        check_parity(policy, actions, obs, "tampered file")


def test_sim2sim_builds_the_training_observation(quadruped, quadruped_onnx):
    """The plain-MuJoCo observation, built from the metadata alone, equals the training env's (noise off)."""
    env, _ = quadruped
    assert_sim2sim_observation_matches(env, quadruped_onnx, steps=20)


def test_sim2sim_runs_without_torch(quadruped_onnx):
    code = ("import sys, json; from apps.sim2sim import run; m = run(sys.argv[1], 1, 0); "
            "assert 'torch' not in sys.modules, 'torch was imported'; print(json.dumps(m))")
    proc = subprocess.run([sys.executable, "-c", code, str(quadruped_onnx)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)
    assert m["episodes"] == 1 and 0 <= m["fall_rate"] <= 1 and m["lin_vel_tracking_error"] >= 0
    assert m["runtime"] == "onnxruntime in plain MuJoCo"
    assert set(m["by_command"]) == {"lin_vel_x", "lin_vel_y", "yaw_rate"}


def test_non_legged_mjx_onnx_file_is_refused(tmp_path):
    from contract.errors import UserError

    torch.onnx.export(torch.nn.Linear(3, 2), (torch.zeros(1, 3),), str(tmp_path / "other.onnx"), dynamo=True,
                      input_names=["obs"], output_names=["actions"])
    with pytest.raises(UserError, match="was not exported by legged-mjx"):
        OnnxPolicy(tmp_path / "other.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(UserError, match="is not a readable ONNX model"):
        OnnxPolicy(tmp_path / "junk.onnx")


def test_squashed_gaussian_export_gives_the_squashed_mean_in_env_units(tmp_path):
    from rl_core.config import PolicyConfig
    from rl_core.env_api import ActionSpec

    torch.manual_seed(5)
    policy = ActorCritic(3, None, ActionSpec(False, 1, low=(-2.0,), high=(2.0,)),
                         PolicyConfig(distribution="squashed_gaussian")).eval()
    with torch.no_grad():
        policy.actor[-1].weight.mul_(2000.0)  # drive some means far into the saturation of tanh
    err = export_onnx(policy, tmp_path / "p.onnx", {"format": "legged-mjx-policy/1", "obs_dim": 3})
    assert err <= 1e-5
    obs = torch.randn(500, 3) * 3
    actions = OnnxPolicy(tmp_path / "p.onnx")(obs.numpy())
    assert actions.min() >= -2.0 and actions.max() <= 2.0 and actions.max() > 1.9
    with torch.no_grad():
        np.testing.assert_allclose(actions, policy.act_inference(obs).numpy(), atol=1e-5)
