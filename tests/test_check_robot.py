"""The robot check (``python -m tools.check_robot``): the built-in quadruped stands (OK), a deliberately weak one
sags with its thighs or calves on the floor (FAIL, with the numbers and what to change)."""

from __future__ import annotations

import json
import pytest

from tools import check_robot

WEAK_FILE = '''import dataclasses
from configs.locomotion import flat_task
from envs.robots.quadruped import QUADRUPED
from envs.robots.spec import ActuatorGroup
WEAK = dataclasses.replace(QUADRUPED, name="weak", actuators=(
    ActuatorGroup(joints=".*_(hip|thigh)_joint", kp=5.0, kd=0.2, effort_limit=23.7),
    ActuatorGroup(joints=".*_calf_joint", kp=5.0, kd=0.2, effort_limit=35.55)))
flat = flat_task("weak-flat", WEAK)
'''


def test_the_built_in_quadruped_is_ok(tmp_path, capsys):
    out = tmp_path / "check.json"
    assert check_robot.main(["--task", "quadruped-flat", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["verdict"] == "OK", report
    assert 0.8 * 0.30 < report["standing"]["base_height"] < 0.30 and report["standing"]["contacts"] == {}
    assert report["standing"]["diverged_at"] is None
    assert [r["group"] for r in report["step_response"]] == [".*_(hip|thigh)_joint", ".*_calf_joint"]
    for r in report["step_response"]:
        assert 0.0 < r["rise_time"] < check_robot.RISE_TIME and r["steady_state_error"] < 0.1
    assert report["seconds"] < 60
    assert "robot check of quadruped-flat (quadruped): OK" in capsys.readouterr().out


def test_a_weak_quadruped_sags_and_is_told_to_raise_kp(tmp_path):
    path = tmp_path / "weak.py"
    path.write_text(WEAK_FILE)
    out = tmp_path / "check.json"
    assert check_robot.main([f"{path}:flat", "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    assert report["verdict"] == "FAIL"
    (problem,) = report["problems"]
    assert "base settles at 0.1" in problem and "of 0.30 m" in problem and "raise kp" in problem, problem
    assert "calf contacts fire" in problem.replace("FL_calf, FR_calf, RL_calf, RR_calf", "calf"), problem


def test_an_unstable_servo_is_named_instead_of_asking_for_more_kp(tmp_path):
    path = tmp_path / "stiff.py"
    path.write_text(WEAK_FILE.replace("kp=5.0, kd=0.2", "kp=20.0, kd=20.0"))  # kd x dt / inertia >> 2: Euler blows up
    report = check_robot.check(f"{path}:flat")
    assert report["verdict"] == "FAIL"
    assert any("the servo is unstable" in p and "lower kd (now 20)" in p for p in report["problems"]), report
    assert not any("raise kp" in p for p in report["problems"]), report


@pytest.mark.slow
def test_the_solver_search_recommends_a_stable_setting():
    report = check_robot.check("quadruped-flat", solver=True)
    assert len(report["solver_trials"]) == len(check_robot.SOLVER_GRID)
    assert all(t["diverged"] == 0.0 and t["steps_per_s"] > 0 for t in report["solver_trials"])
    assert report["solver_advice"].startswith("cheapest stable solver: SimOverrides(iterations=")
    assert report["verdict"] == "OK"  # the solver's advice is information


def test_bad_input_is_one_line(tmp_path, capsys):
    assert check_robot.main([f"{tmp_path / 'nope.py'}:flat"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err
    with pytest.raises(SystemExit) as e:
        check_robot.main([])
    assert e.value.code == 2
    assert check_robot.main(["--task", "CartPole-v1"]) == 2
    assert "not a locomotion task" in capsys.readouterr().err


def test_a_robot_with_its_files_own_actuators(tmp_path):
    path = tmp_path / "file_actuators.py"
    path.write_text("import dataclasses\nfrom configs.locomotion import flat_task\n"
                    "from envs.robots.quadruped import QUADRUPED\n"
                    "flat = flat_task('own', dataclasses.replace(QUADRUPED, name='own', actuators='file'))\n")
    report = check_robot.check(f"{path}:flat")
    assert report["verdict"] == "OK", report
    # the file's actuators grouped by their gains and limits
    assert [r["group"] for r in report["step_response"]] == ["kp 20 kd 0.5 limit 23.7", "kp 20 kd 0.5 limit 35.55"]
