"""play.py on a quadruped-flat checkpoint: locomotion metrics in the JSON, a non-blank MP4 and a gait plot."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from configs.quadruped import quadruped_flat
from envs.tasks.locomotion import LocomotionEnv
from rl_core.config_io import dump_yaml
from rl_core.runner import OnPolicyRunner

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    run = tmp_path_factory.mktemp("run")
    cfg = quadruped_flat()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native"),
                              runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=1, device="cpu"),
                              algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    (run / "config.yaml").write_text(dump_yaml(cfg))
    runner = OnPolicyRunner(LocomotionEnv(cfg.env), cfg, task="quadruped-flat", run_dir=run, quiet=True)
    runner.learn()
    return run


def test_play_writes_locomotion_metrics_video_and_gait_plot(checkpoint, tmp_path):
    out = tmp_path / "walk.mp4"
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(checkpoint), "--episodes", "4",
                           "--video", str(out), "--video-seconds", "1", "--json", str(tmp_path / "m.json")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["episodes"] == 4
    for key in ("mean_episode_return", "mean_episode_length", "fall_rate", "lin_vel_error", "yaw_rate_error"):
        assert isinstance(metrics[key], float)
    assert 0.0 <= metrics["fall_rate"] <= 1.0

    import imageio.v2 as imageio

    frames = imageio.mimread(out)
    assert len(frames) == 50  # 1 s at 50 Hz
    assert frames[0].std() > 5.0  # not blank
    assert out.with_suffix(".png").stat().st_size > 10_000
