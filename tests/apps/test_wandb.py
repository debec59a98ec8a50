"""--logger wandb / both with WANDB_MODE=offline: a W&B run folder appears in the run folder and holds the scalars
and the resolved config, with no account and no network; a resumed run continues the same W&B run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("wandb")


def _train(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--quiet", *args], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow
def test_offline_wandb_run_holds_scalars_and_config(tmp_path):
    run = tmp_path / "run"
    _train("--task", "CartPole-v1", "--num-envs", "4", "--max-iterations", "3", "--run-dir", str(run), "--logger",
           "both", "runner.num_steps_per_env=16", "algorithm.gamma=0.97")
    runs = list((run / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    log = next(runs[0].glob("run-*.wandb")).read_bytes()
    for key in (b"Loss/value", b"Episode/mean_return", b"Perf/samples_per_s", b"env_steps"):
        assert key in log, key
    assert b"gamma" in log and b"0.97" in log  # the resolved config
    assert list(run.glob("events.out.tfevents.*"))  # and TensorBoard too ("both")
    run_id = (run / "wandb_run_id.txt").read_text().strip()
    assert run_id in runs[0].name
    _train("--resume", str(run), "--max-iterations", "4", "--logger", "wandb")
    assert (run / "wandb_run_id.txt").read_text().strip() == run_id  # the resumed run continues the same W&B run
    assert all(run_id in p.name for p in (run / "wandb").glob("offline-run-*"))


@pytest.mark.slow
def test_play_adds_its_metrics_and_video_to_the_runs_wandb_run(tmp_path):
    run = tmp_path / "run"
    _train("--task", "CartPole-v1", "--num-envs", "4", "--max-iterations", "1", "--run-dir", str(run),
           "--logger", "wandb", "runner.num_steps_per_env=16")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    video = tmp_path / "cartpole.mp4"
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(run), "--episodes", "1",
                           "--video", str(video), "--video-seconds", "0.3", "--wandb"], capture_output=True, text=True,
                          env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_id = (run / "wandb_run_id.txt").read_text().strip()
    logs = b"".join(p.read_bytes() for p in (run / "wandb").glob(f"offline-run-*-{run_id}/run-*.wandb"))
    assert b"play/mean_episode_return" in logs and b"play/video" in logs
    assert list((run / "wandb").glob(f"offline-run-*-{run_id}/files/media/videos/play/*.mp4"))


def test_play_wandb_without_a_wandb_run_is_one_line_before_evaluating(tmp_path, capsys):
    import play
    from tests.helpers import make_runner, tiny_cartpole

    make_runner(tiny_cartpole(iterations=1), run_dir=tmp_path).learn()
    assert play.main(["--checkpoint", str(tmp_path), "--wandb"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == f"error: --wandb: {tmp_path} has no W&B run (train it with --logger wandb or both)"
    assert "mean_episode_return" not in out  # nothing was evaluated
