"""The robot check (``python -m tools.check_robot``): the built-in quadruped stands (OK), a deliberately weak one
sags with its calves on the floor (FAIL, with the numbers and what to change), an unstable servo is named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from configs.catalog import get_task
from contract.errors import UserError
from envs.robot_check import advice, verdict

ROOT = Path(__file__).resolve().parents[3]
FEW = 128
"""Random rollouts of the checks whose subject is not a rare divergence (the tool runs 1024)."""

WEAK_FILE = '''import dataclasses
from configs.locomotion import flat_task
from envs.robots.quadruped import QUADRUPED
from envs.robots.spec import ActuatorGroup
WEAK = dataclasses.replace(QUADRUPED, name="weak", actuators=(
    ActuatorGroup(joints=".*_(hip|thigh)_joint", kp=5.0, kd=0.2, effort_limit=23.7),
    ActuatorGroup(joints=".*_calf_joint", kp=5.0, kd=0.2, effort_limit=35.55)))
flat = flat_task("weak-flat", WEAK)
'''


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.check_robot", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def _file_task(tmp_path: Path, text: str) -> str:
    path = tmp_path / "robot.py"
    path.write_text(text)
    return f"{path}:flat"


def test_the_built_in_quadruped_is_ok(tmp_path):
    out = tmp_path / "check.json"
    # 256 random rollouts of 2 s (the tool runs 1024): a divergence rate of 1e-4 per step still shows
    result = _tool("--task", "quadruped-flat", "--rollouts", "256", "--json", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "robot check of quadruped-flat (quadruped): OK" in result.stdout
    report = json.loads(out.read_text())
    assert report["verdict"] == "OK" and not report["problems"] and not report["advice"], report
    assert report["solver"]["random_actions"]["diverged"] == 0.0
    assert 0.8 * 0.30 < report["standing"]["base_height"] < 0.30 and report["standing"]["contacts"] == {}
    assert report["standing"]["diverged_at"] is None
    assert [r["group"] for r in report["step_response"]] == [".*_(hip|thigh)_joint", ".*_calf_joint"]
    for r in report["step_response"]:
        assert 0.0 < r["rise_time"] < advice.RISE_TIME and r["steady_state_error"] < 0.1
    assert report["solver"]["random_actions"]["rollouts"] == 256


def test_a_weak_quadruped_sags_and_is_told_to_raise_kp(tmp_path):
    report = verdict.check(get_task(_file_task(tmp_path, WEAK_FILE)), rollouts=FEW)
    assert report["verdict"] == "FAIL"
    (problem,) = report["problems"]
    assert "base settles at 0.1" in problem and "of 0.3 m" in problem and "raise kp" in problem, problem
    assert "FL_calf, FR_calf, RL_calf, RR_calf contacts fire" in problem, problem
    assert "problem: base settles at" in verdict.render(report)


def test_an_unstable_servo_is_named_instead_of_asking_for_more_kp(tmp_path):
    stiff = WEAK_FILE.replace("kp=5.0, kd=0.2", "kp=20.0, kd=20.0")  # kd x dt / inertia >> 2: Euler blows up
    report = verdict.check(get_task(_file_task(tmp_path, stiff)), rollouts=FEW)
    assert report["verdict"] == "FAIL"
    assert any("the servo is unstable" in p and "lower kd (now 20)" in p for p in report["problems"]), report
    assert not any("raise kp" in p for p in report["problems"]), report


H1_EULER = f'''import dataclasses, importlib.util
from configs.locomotion import flat_task
spec = importlib.util.spec_from_file_location("h1_like", {str(ROOT / "examples" / "h1_like" / "h1_like.py")!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
EULER = dataclasses.replace(module.H1_LIKE, sim=dataclasses.replace(module.H1_LIKE.sim, integrator=None))
flat = flat_task("h1-euler-flat", EULER)
'''


def test_a_servo_that_keeps_oscillating_is_unstable_and_implicitfast_is_named(tmp_path):
    """h1_like's file sets no integrator: under MuJoCo's Euler its ankles (kd 6 on little inertia, 45 N m) end
    the step response in a force-limited oscillation (overshoot and error moderate, the joint still moving fast);
    the check calls it unstable and names the implicit integrator, which its robot file sets."""
    report = verdict.check(get_task(_file_task(tmp_path, H1_EULER)), rollouts=FEW)
    assert report["verdict"] == "FAIL"
    ankles = next(r for r in report["step_response"] if "ankle" in r["group"])
    assert ankles["final_speed"] > advice.STILL_MOVING and ankles["overshoot"] < advice.UNSTABLE, ankles
    (problem,) = report["problems"]
    assert "ankle" in problem and "the servo is unstable" in problem, problem
    assert "SimOverrides(integrator='implicitfast')" in problem, problem
    fixed = verdict.check(get_task(str(ROOT / "examples" / "h1_like" / "h1_like.py") + ":flat"), rollouts=FEW)
    assert fixed["verdict"] == "OK", fixed["problems"]
    assert all(r["final_speed"] < advice.STILL_MOVING for r in fixed["step_response"])


def test_a_simulation_that_blows_up_fails_with_where_and_why(tmp_path):
    blows_up = WEAK_FILE.replace("kp=5.0, kd=0.2, effort_limit=23.7", "kp=20.0, kd=20.0, effort_limit=1e6").replace(
        "kp=5.0, kd=0.2, effort_limit=35.55", "kp=20.0, kd=20.0, effort_limit=1e6")  # unbounded unstable servos
    report = verdict.check(get_task(_file_task(tmp_path, blows_up)), rollouts=FEW)
    assert report["verdict"] == "FAIL" and report["standing"]["diverged_at"] is not None
    assert report["solver"]["random_actions"]["diverged"] == 1.0
    assert any("diverge with the task's solver settings (4 / 6 iterations, pyramidal;" in p for p in report["problems"])
    assert all(r["overshoot"] <= 99.0 for r in report["step_response"])


def test_a_robot_with_its_files_own_actuators(tmp_path):
    own = ("import dataclasses\nfrom configs.locomotion import flat_task\nfrom envs.robots.quadruped import QUADRUPED\n"
           "flat = flat_task('own', dataclasses.replace(QUADRUPED, name='own', actuators='file'))\n")
    report = verdict.check(get_task(_file_task(tmp_path, own)), rollouts=FEW)
    assert report["verdict"] == "OK", report
    # the file's actuators grouped by their gains and limits
    assert [r["group"] for r in report["step_response"]] == ["kp 20 kd 0.5 limit 23.7", "kp 20 kd 0.5 limit 35.55"]


@pytest.mark.slow
def test_train_check_runs_the_robot_check(tmp_path, capsys):
    import train

    assert train.main(["--task", _file_task(tmp_path, WEAK_FILE), "--check"]) == 1
    out = capsys.readouterr().out
    assert ": FAIL" in out and "problem: base settles at" in out


@pytest.mark.slow
def test_the_solver_search_recommends_a_stable_setting():
    report = verdict.check(get_task("quadruped-flat"), solver=True)
    assert len(report["solver_trials"]) == len(verdict.SOLVER_GRID)
    pyramidal = [t for t in report["solver_trials"] if t["cone"] == "pyramidal"]
    assert all(t["diverged"] == 0.0 and t["steps_per_s"] > 0 for t in pyramidal)
    assert report["solver_advice"].startswith("cheapest solver that passes the check: SimOverrides(iterations=")
    assert report["verdict"] == "OK"  # the solver's advice is information


def test_bad_input_is_one_line(tmp_path):
    result = _tool(f"{tmp_path / 'nope.py'}:flat")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "does not exist" in result.stderr
    with pytest.raises(UserError, match="not a locomotion or tracking task"):
        verdict.check(get_task("CartPole-v1"))
