"""play.py on a quadruped-flat checkpoint: locomotion metrics in the JSON, a non-blank MP4 and a gait plot."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from configs.catalog import get_task
from configs.quadruped import FLAT_QUADRUPED
from envs.tasks.locomotion import LocomotionEnv
from rl_core.config_io import dump_yaml
from rl_core.runner import OnPolicyRunner

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    run = tmp_path_factory.mktemp("run")
    cfg = get_task("quadruped-flat").default_config()
    # 2 s episodes (100 control steps): play's evaluation and sim2sim run whole episodes of the run's config
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native", episode_length_s=2.0),
                              runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=1,
                                                         device="cpu"),
                              algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    (run / "config.yaml").write_text(dump_yaml(cfg))
    runner = OnPolicyRunner(LocomotionEnv(cfg.env, FLAT_QUADRUPED), cfg, task="quadruped-flat", run_dir=run, quiet=True)
    runner.learn()
    return run


def test_play_writes_locomotion_metrics_video_and_gait_plot(checkpoint, tmp_path):
    out = tmp_path / "walk.mp4"
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(checkpoint), "--episodes", "4",
                           "--video", str(out), "--video-seconds", "1", "--json", str(tmp_path / "m.json"),
                           "--video-quality", "light"],  # no shadows: 12 s less drawing on a software renderer
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["episodes"] == 4
    swing = {f"swing_{leg}_foot" for leg in ("FR", "FL", "RR", "RL")}  # each foot's fraction of steps in the air
    assert set(metrics) == {"task", "checkpoint", "iteration", "episodes", "diverged_episodes", "mean_episode_return",
                            "mean_episode_length", "fall_rate", "lin_vel_tracking_error", "yaw_rate_tracking_error",
                            "by_command", "success",
                            "duty_factor_difference"} | swing
    assert all(0.0 <= metrics[k] <= 1.0 for k in swing | {"success"})  # success: the env's episode_stats
    # left minus right feet's time on the ground = right minus left feet's time in the air, per pair
    pairs = (metrics["swing_FR_foot"] - metrics["swing_FL_foot"]
             + metrics["swing_RR_foot"] - metrics["swing_RL_foot"]) / 2
    assert abs(metrics["duty_factor_difference"] - pairs) < 1e-6
    for key in ("mean_episode_return", "mean_episode_length", "fall_rate", "lin_vel_tracking_error",
                "yaw_rate_tracking_error"):
        assert isinstance(metrics[key], float)
    assert 0.0 <= metrics["fall_rate"] <= 1.0
    by = metrics["by_command"]
    assert set(by) == {"lin_vel_x", "lin_vel_y", "yaw_rate"}
    assert [(r["low"], r["high"]) for r in by["lin_vel_x"]] == [(-1.0, -0.5), (-0.5, 0.0), (0.0, 0.5), (0.5, 1.0)]
    for rows in by.values():
        assert sum(r["steps"] for r in rows) == metrics["episodes"] * metrics["mean_episode_length"]
        for r in rows:
            assert r["steps"] == 0 or r["lin_vel_tracking_error"] >= 0.0

    import imageio.v2 as imageio

    frames = imageio.mimread(out)
    assert len(frames) == 50  # 1 s at 50 Hz
    assert frames[0].std() > 5.0  # not blank
    assert out.with_suffix(".png").stat().st_size > 10_000
    assert frames[0][:40].mean() < frames[0][60:].mean()  # the dark caption band with the command and velocity


def test_export_and_sim2sim_from_the_command_line(checkpoint, tmp_path):
    onnx_file = tmp_path / "policy.onnx"
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(checkpoint), "--episodes", "2",
                           "--export-onnx", str(onnx_file), "--sim2sim", str(onnx_file),
                           "--json", str(tmp_path / "m.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    sim = m["sim2sim"]
    assert sim["runtime"] == "onnxruntime in plain MuJoCo" and sim["episodes"] == 2
    for key in ("lin_vel_tracking_error", "yaw_rate_tracking_error", "fall_rate", "mean_episode_length"):
        assert isinstance(sim[key], float) and isinstance(m[key], float)
    assert "play (training sim)" in proc.stdout and "sim2sim" in proc.stdout


def test_checkpoint_of_another_task_is_one_line(checkpoint):
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(checkpoint),
                           "--task", "CartPole-v1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: checkpoint error: {checkpoint}/checkpoints/model_1.pt was trained on task "
                                   "'quadruped-flat', not 'CartPole-v1'")
