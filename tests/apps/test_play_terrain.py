"""play.py --terrain TYPE --level L: a rough and a flat policy on one tile type at one level (the JSON's
``terrain`` section, with --sim2sim and --video too), and its one-line errors."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from configs.catalog import get_task
from rl_core.config_io import dump_yaml
from rl_core.runner import OnPolicyRunner
from tests.apps import test_play

ROOT = Path(__file__).resolve().parents[2]
TYPES = "flat, rough, slope_up, slope_down, stairs_up, stairs_down, obstacles, gaps"


def _train(task: str, run: Path, num_envs: int) -> Path:
    """One tiny iteration of ``task`` (native MuJoCo, CPU) with its config in the run folder."""
    spec = get_task(task)
    cfg = spec.default_config()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=num_envs, backend="native"),
                              runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=1,
                                                         device="cpu"),
                              algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    (run / "config.yaml").write_text(dump_yaml(cfg))
    import torch

    OnPolicyRunner(spec.make_env(cfg.env, torch.device("cpu")), cfg, task=task, run_dir=run, quiet=True).learn()
    return run


@pytest.fixture(scope="module")
def rough_run(tmp_path_factory):
    return _train("quadruped-rough", tmp_path_factory.mktemp("rough"), 64)


@pytest.fixture(scope="module")
def flat_run(tmp_path_factory):
    return _train("quadruped-flat", tmp_path_factory.mktemp("flat"), 8)


cartpole_run = test_play.cartpole_run  # the same fixture: a tiny trained CartPole run
_play = test_play._play


def test_rough_policy_on_stairs_writes_a_terrain_section(rough_run, tmp_path, capsys):
    code, out, err = _play(capsys, "--checkpoint", str(rough_run), "--terrain", "stairs_up", "--level", "5",
                           "--episodes", "4", "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["episodes"] == 4 and m["task"] == "quadruped-rough"
    assert m["terrain"] == {"type": "stairs_up", "level": 5, "success_rate": m["success"]}
    assert m["success"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    assert [r["low"] for r in m["by_command"]["lin_vel_x"]][0] == 0.5  # the evaluation's commands: 0.5-0.8 m/s
    assert "terrain stairs_up level 5: success rate" in out


def test_exported_rough_policy_on_stairs_in_sim2sim(rough_run, tmp_path, capsys):
    onnx_file = tmp_path / "rough.onnx"
    code, out, err = _play(capsys, "--checkpoint", str(rough_run), "--terrain", "stairs_up", "--level", "5",
                           "--episodes", "1", "--export-onnx", str(onnx_file), "--sim2sim", str(onnx_file),
                           "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    sim = json.loads((tmp_path / "m.json").read_text())["sim2sim"]
    assert sim["runtime"] == "onnxruntime in plain MuJoCo" and sim["episodes"] == 1
    assert sim["terrain"] == {"type": "stairs_up", "level": 5, "success_rate": sim["success"]}
    assert sim["mean_episode_length"] <= 600  # 12 s episodes at 50 Hz
    assert "(play | sim2sim)" in out
    # the file alone, on another level of the terrain it carries
    code, _, err = _play(capsys, "--sim2sim", str(onnx_file), "--terrain", "stairs_up", "--level", "2",
                         "--episodes", "1", "--json", str(tmp_path / "s.json"))
    assert code == 0, err
    assert json.loads((tmp_path / "s.json").read_text())["terrain"]["level"] == 2


@pytest.mark.slow
def test_flat_policy_on_terrain_with_video(flat_run, tmp_path):
    """A flat-trained policy (terrain plane, no height scan) on generated slopes, filmed (a fresh process: the
    headless GL backend is chosen before MuJoCo is imported)."""
    video = tmp_path / "slope.mp4"
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    proc = subprocess.run([sys.executable, str(ROOT / "play.py"), "--checkpoint", str(flat_run), "--terrain",
                           "slope_up", "--level", "3", "--episodes", "1", "--video", str(video), "--video-seconds",
                           "0.5", "--json", str(tmp_path / "m.json")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["terrain"]["type"] == "slope_up" and m["terrain"]["level"] == 3 and m["episodes"] == 1
    import imageio.v2 as imageio

    frames = imageio.mimread(video)
    assert len(frames) == 25 and frames[0].std() > 5.0


def test_terrain_default_level_is_medium(rough_run, tmp_path, capsys):
    code, _, err = _play(capsys, "--checkpoint", str(rough_run), "--terrain", "flat", "--episodes", "1",
                         "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    assert json.loads((tmp_path / "m.json").read_text())["terrain"]["level"] == 5


@pytest.mark.parametrize(("run", "args", "message"), [
    ("cartpole", ["--level", "5"], f"error: --level needs --terrain TYPE (one of {TYPES})"),
    ("cartpole", ["--terrain", "stairs"], f"error: --terrain=stairs is not allowed; expected one of {TYPES}"),
    ("cartpole", ["--terrain", "stairs_up", "--level", "-1"],
     "error: --level=-1 is not allowed; expected an integer >= 0 (a terrain level)"),
    ("cartpole", ["--terrain", "stairs_up"],
     "error: --terrain applies to the MuJoCo locomotion tasks, not to task CartPole-v1"),
    ("rough", ["--terrain", "stairs_up", "--level", "10"],
     "error: --level=10 is not allowed; expected an integer in [0, 9] (the run's env.terrain.levels is 10)"),
])
def test_bad_terrain_input_is_one_line(request, capsys, run, args, message):
    checkpoint = request.getfixturevalue(f"{run}_run")
    code, _, err = _play(capsys, "--checkpoint", str(checkpoint), *args)
    assert code == 2
    assert err.strip() == message


def test_sim2sim_of_a_flat_file_on_terrain_is_one_line(flat_run, tmp_path, capsys):
    onnx_file = tmp_path / "flat.onnx"
    code, _, err = _play(capsys, "--checkpoint", str(flat_run), "--episodes", "0", "--export-onnx", str(onnx_file))
    assert code == 0, err
    code, _, err = _play(capsys, "--sim2sim", str(onnx_file), "--terrain", "stairs_up", "--level", "4")
    assert code == 2
    assert err.strip() == ("error: --terrain stairs_up: the policy file's scene is a plane (exported from an env "
                           "without generated terrain); export it with play.py --checkpoint RUN --terrain stairs_up "
                           "--level 4 --export-onnx FILE")


@pytest.mark.slow
def test_terrain_table_tool(rough_run, tmp_path):
    """tools/terrain_table.py: a row per checkpoint, success per type and level, JSON and markdown (a subprocess:
    tests do not import tools/)."""
    out_json, out_md = tmp_path / "t.json", tmp_path / "t.md"
    proc = subprocess.run([sys.executable, "-m", "tools.terrain_table", "--checkpoint", str(rough_run), "--episodes",
                           "2", "--types", "stairs_up", "--levels", "5", "--json", str(out_json), "--markdown",
                           str(out_md)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out_json.read_text())
    assert result["episodes"] == 2 and result["medium_level"] == 5 and result["threshold"] == 0.8
    [row] = result["checkpoints"]
    assert row["task"] == "quadruped-rough" and row["iteration"] == 1
    cell = row["by_level"]["stairs_up"]["5"]
    assert cell["success"] in (0.0, 0.5, 1.0) and 0.0 <= cell["fall_rate"] <= 1.0
    assert row["medium"]["stairs_up"] == cell["success"]
    assert row["max_level"]["stairs_up"] == (5 if cell["success"] >= 0.8 else None)
    table = out_md.read_text()
    assert "| checkpoint | stairs_up |" in table and "| 5 |" in table and table in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tools.terrain_table", "--checkpoint", str(rough_run), "--types",
                           "stairs"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: --types: stairs is not allowed; expected tile types among {TYPES}"
