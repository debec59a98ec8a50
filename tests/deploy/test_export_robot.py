"""The example robot (mesh visuals, joints and motors in different orders) exported to ONNX: the file carries the
compiled scene (without its visual mesh), so ``play.py --sim2sim`` runs it after the robot's files are gone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from deploy.onnx_policy import OnnxPolicy
from deploy.sim2sim import load_scene
from envs.registry import load_file_task
from envs.tasks.locomotion.config import NoiseConfig
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from tests.sim2sim_check import assert_sim2sim_observation_matches

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A random policy of the example robot, built from a copy of its files, exported; then the copy is deleted."""
    tmp = tmp_path_factory.mktemp("robot")
    robot_dir = tmp / "my_robot"
    shutil.copytree(ROOT / "examples" / "my_robot", robot_dir)
    task = load_file_task(f"{robot_dir / 'my_robot.py'}:flat")
    cfg = task.default_config()
    env_cfg = cfg.env.__class__(num_envs=1, backend="native", noise=NoiseConfig(scale=0.0)).for_evaluation()
    env = task.make_env(env_cfg, torch.device("cpu"))
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy).eval()
    path = tmp / "policy.onnx"
    export_onnx(policy, path, policy_metadata(task.name, 3, policy, env.export_metadata()))
    shutil.rmtree(robot_dir)  # the MJCF, the mesh and the robot file are gone
    return env, policy, path


def test_the_onnx_file_carries_the_trained_scene_without_its_visual_mesh(exported):
    """Format 2.4: the visual-only trunk mesh stays out of the file (tests/deploy/test_export_scene.py: the same
    physics)."""
    env, _, path = exported
    meta = OnnxPolicy(path).metadata
    model = load_scene(meta)
    assert env.model.nmesh == 1 and model.nmesh == 0
    assert model.nsensordata == env.model.nsensordata and model.nu == env.model.nu
    np.testing.assert_array_equal(model.body_mass, env.model.body_mass)
    assert meta["joint_names"][0] == "FR_hip_joint" and meta["foot_names"] == ["FR", "FL", "RR", "RL"]


def test_sim2sim_observation_matches_the_env_for_reordered_joints(exported):
    """Joints by name in plain MuJoCo, from the stored scene: the observation equals the training env's."""
    env, _, path = exported
    assert_sim2sim_observation_matches(env, path, steps=15)


def test_play_sim2sim_runs_from_the_onnx_file_alone(exported, tmp_path):
    _, _, path = exported
    out = tmp_path / "m.json"
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--sim2sim", str(path), "--episodes", "1",
                           "--json", str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(out.read_text())
    assert m["episodes"] == 1 and m["runtime"] == "onnxruntime in plain MuJoCo" and m["mean_episode_length"] >= 1
