"""Errors with a place: an exception raised while a user's robot file imports is one line with the file's path and
line (and the spec field when a value has the wrong type); ``--debug`` shows the user's frame."""

from __future__ import annotations

import shutil
import traceback
from pathlib import Path

import pytest

import train
from contract.errors import UserError
from envs.file_errors import field_line, field_problems
from envs.registry import load_file_task
from envs.robots.quadruped import QUADRUPED

ROOT = Path(__file__).resolve().parents[3]

ROBOT_FILE = '''from pathlib import Path

from configs.locomotion import flat_task
from envs.robots.spec import ActuatorGroup, RobotSpec

ROBOT = RobotSpec(
    name="placed",
    mjcf=Path(__file__).with_name("my_robot.xml"),
    base_body="base",
    joints=("FR_.*_joint", "FL_.*_joint", "RR_.*_joint", "RL_.*_joint"),
    default_pose={".*_hip_joint": 0.0, ".*_thigh_joint": 0.9, ".*_calf_joint": -1.5},
    actuators=(ActuatorGroup(".*", kp=20.0, kd=0.5, effort_limit=30.0),),
    action_scale=0.25,
    base_height=0.32,
    foot_geoms=("FR", "FL", "RR", "RL"),
)
flat = flat_task("placed-flat", ROBOT)
'''
LINE = {line.split("=")[0].strip(): i + 1 for i, line in enumerate(ROBOT_FILE.splitlines()) if "=" in line}
"""Line of each ``name=`` in ROBOT_FILE."""

MISTAKES = {  # case -> (replace, by), expected line (a key of LINE), words of the message
    "name error": (('mjcf=Path(', 'mjcf=Pth('), "mjcf", ("NameError", "Pth")),
    "syntax error": (('action_scale=0.25,', 'action_scale=0.25,,'), "action_scale", ("SyntaxError",)),
    "pose pair without trailing comma": (('default_pose={".*_hip_joint": 0.0, ".*_thigh_joint": 0.9, '
                                          '".*_calf_joint": -1.5}',
                                          'default_pose=((".*_joint", 0.0))'), "default_pose",
                                         ("field default_pose of RobotSpec", "trailing comma")),
    "unknown foot (found when the spec meets its MJCF)": (('foot_geoms=("FR",', 'foot_geoms=("FR_toe",'), "foot_geoms",
                                                         ("robot spec 'placed' field foot_geoms", "FR_toe")),
    "gain as a string": (('kp=20.0', 'kp="20"'), "actuators", ("robot spec 'placed' field actuators[0].kp",
                                                               "expected a number, got '20'")),
}


def _robot_dir(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "robot"
    d.mkdir()
    shutil.copy(ROOT / "examples" / "my_robot" / "my_robot.xml", d)
    shutil.copytree(ROOT / "examples" / "my_robot" / "assets", d / "assets")
    (d / "robot.py").write_text(text)
    return d / "robot.py"


@pytest.mark.parametrize("case", list(MISTAKES))
def test_a_mistake_in_the_robot_file_is_one_line_with_its_place(case, tmp_path, capsys):
    (old, new), line_of, words = MISTAKES[case]
    assert old in ROBOT_FILE
    path = _robot_dir(tmp_path, ROBOT_FILE.replace(old, new))
    code = train.main(["--task", f"{path}:flat", "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{path}:{LINE[line_of]}" in err, err
    for w in words:
        assert w in err, err
    assert not (tmp_path / "run").exists()


def test_debug_shows_the_users_frame(tmp_path):
    path = _robot_dir(tmp_path, ROBOT_FILE.replace("mjcf=Path(", "mjcf=Pth("))
    with pytest.raises(UserError) as info:
        train.main(["--task", f"{path}:flat", "--debug"])
    shown = "".join(traceback.format_exception(info.value))
    assert f'File "{path}", line {LINE["mjcf"]}' in shown and "NameError" in shown


def test_the_unmodified_file_loads(tmp_path):
    path = _robot_dir(tmp_path, ROBOT_FILE)
    assert load_file_task(f"{path}:flat").name == f"{path}:flat"


def test_field_problems_and_lines():
    import dataclasses

    import numpy as np

    assert field_problems(QUADRUPED) == []
    assert field_problems(dataclasses.replace(QUADRUPED, base_height=np.float32(0.3), joints=["FR_.*"])) == []
    assert field_line(ROBOT_FILE, "ROBOT", "actuators[0].kp") == LINE["actuators"]
    assert field_line(ROBOT_FILE, "ROBOT", "base_height") == LINE["base_height"]
    assert field_line(ROBOT_FILE, "flat", "nothing") == LINE["flat"]
