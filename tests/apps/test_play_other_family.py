"""play.py on a user's own task that is neither a ``MujocoTask`` nor Gymnasium (``tests/fixed_base_task.py``: its
own physics, no base, no feet, no commands, no task family in its export): evaluation and export work; --video
and --sim2sim, which know the MuJoCo task families and Gymnasium only, say so in one line instead of a
traceback. (The fixed-base arm on the task base, ``arm-reach``, films and runs sim2sim:
tests/envs/tasks/test_reach.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import play
import train

TASK = str(Path(__file__).resolve().parents[1].joinpath("fixed_base_task.py")) + ":reach"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reach")
    assert train.main(["--task", TASK, "--run-dir", str(folder), "--quiet"]) == 0
    return folder


def test_evaluation_and_export_work_and_sim2sim_is_one_line(run, tmp_path, capsys):
    onnx_file = tmp_path / "p.onnx"
    code = play.main(["--checkpoint", str(run), "--episodes", "4", "--export-onnx", str(onnx_file),
                      "--json", str(tmp_path / "m.json"), "--sim2sim", str(onnx_file)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"error: policy file {onnx_file} names no task family (metadata task_family): sim2sim runs the "
                   "families locomotion, reach, track, gym\n")
    m = json.loads((tmp_path / "m.json").read_text())  # written after the evaluation, before sim2sim
    assert m["task"] == TASK and m["episodes"] == 4 and m["mean_episode_length"] == 10.0
    assert onnx_file.stat().st_size > 0


def test_video_is_one_line(run, tmp_path, capsys):
    code = play.main(["--checkpoint", str(run), "--episodes", "1", "--video", str(tmp_path / "v.mp4")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"error: --video is not available for task {TASK}: it films MuJoCo tasks (envs/tasks/base.py) "
                   "and Gymnasium tasks\n")
    assert not (tmp_path / "v.mp4").exists()
