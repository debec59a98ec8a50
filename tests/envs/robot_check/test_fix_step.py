"""``check_robot --fix``'s physics step (``envs/robot_check/fix_step.py``): a quadruped whose whole check is OK at 0.01
s takes that step in 2 substeps (the same control period), one whose check there is not OK keeps its step, a biped
takes it at 10 / 10 solver iterations or more, a robot not OK at its own step is not tried; the tasks run the spec's
substeps as ``env.decimation`` (the robot's task defaults and the command line still win) and the check's trials hold
actions for them."""

from __future__ import annotations

import dataclasses

import pytest

from configs.locomotion import flat_task, rough_task
from configs.task_defaults import TaskDefaults
from envs.robot_check import fix_step
from envs.robot_check.rollouts import SolverTrial, solver_trial
from envs.robot_check.trials import quiet_mujoco_warnings
from envs.robots.spec import SimOverrides
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions
from rl_core.config_io import apply_overrides, parse_override
from tests.envs.robot_check.test_check_cases import DAMPED, SPREAD, anymal_c, h1


def _decided(monkeypatch, verdict: str) -> list:
    """The coarse step's trial and check replaced: the check answers ``verdict``; returns the (timestep,
    iterations) each ran at."""
    seen: list = []

    def trial(robot, it, ls, cone, rollouts, spread=None):
        seen.append(("trial", robot.model.opt.timestep, it))
        return SolverTrial(it, ls, cone, 0.0, 1e4, rollouts, rollouts * 200, 0.0, 100.0)

    def evaluate(robot, spread, seconds, rollouts, own=None):
        seen.append(("check", robot.model.opt.timestep, robot.spec.sim.substeps))
        return {"verdict": verdict}

    monkeypatch.setattr(fix_step, "solver_trial", trial)
    monkeypatch.setattr(fix_step, "evaluate", evaluate)
    return seen


@pytest.mark.parametrize("verdict", ["OK", "WARN"])
def test_the_coarse_step_is_taken_only_when_its_whole_check_is_ok(tmp_path, monkeypatch, verdict):
    seen = _decided(monkeypatch, verdict)
    spec = anymal_c(tmp_path, actuators=DAMPED, sim=SimOverrides(timestep=0.005, iterations=20, ls_iterations=20))
    log: list[str] = []
    changes: list[str] = []
    found, report = fix_step.coarser_step(spec, SceneOptions(), SPREAD, 1.0, 64, {"verdict": "OK", "own": 1}, log,
                                          changes)
    assert seen == [("trial", 0.01, 20), ("check", 0.01, 2)]  # at the solver just chosen, 2 substeps
    assert log[0].startswith(f"timestep 0.01 s x 2 substeps: {verdict}, 0 of 64 rollouts diverge"), log
    if verdict == "OK":
        assert (found.sim.timestep, found.sim.substeps, found.sim.iterations) == (0.01, 2, 20)
        assert report == {"verdict": "OK"}
        assert changes == ["physics step: 0.01 s x 2 per 0.02 s control step instead of 0.005 s x 4 (the whole check "
                           "passes there; half the physics' cost)"]
    else:
        assert found is spec and report == {"verdict": "OK", "own": 1} and changes == []


def test_a_biped_takes_the_coarse_step_at_no_fewer_than_its_solver_iterations(tmp_path, monkeypatch):
    seen = _decided(monkeypatch, "OK")
    changes: list[str] = []
    biped = h1(tmp_path, sim=SimOverrides(timestep=0.005, iterations=4, ls_iterations=6))
    found = fix_step.coarser_step(biped, SceneOptions(), SPREAD, 1.0, 64, {"verdict": "OK"}, [], changes)[0]
    assert seen == [("trial", 0.01, 10), ("check", 0.01, 2)]
    assert (found.sim.timestep, found.sim.substeps, found.sim.iterations, found.sim.ls_iterations) == (0.01, 2, 10, 10)
    assert "solver 10 / 10 iterations instead of 4 / 6 (a biped's fewest there)" in changes[0], changes
    # a second --fix searches the solver from that floor up (it keeps 10 / 10); a quadruped's ladder is as it was
    ladder = ((4, 6), (8, 10), (20, 20))
    assert fix_step.solver_floor(found, SceneOptions(), ladder) == ((10, 10), (20, 20))
    assert fix_step.solver_floor(biped, SceneOptions(), ladder) == ladder
    quadruped = anymal_c(tmp_path, sim=SimOverrides(timestep=0.01, substeps=2))
    assert fix_step.solver_floor(quadruped, SceneOptions(), ladder) == ladder


def test_a_robot_not_ok_at_its_own_step_or_already_there_is_not_tried(tmp_path, monkeypatch):
    seen = _decided(monkeypatch, "OK")
    quadruped = anymal_c(tmp_path)
    assert fix_step.coarser_step(quadruped, SceneOptions(), SPREAD, 1.0, 64, {"verdict": "WARN"}, [], [])[0] \
        is quadruped
    coarse = anymal_c(tmp_path, sim=SimOverrides(timestep=0.01, substeps=2))  # already there
    assert fix_step.coarser_step(coarse, SceneOptions(), SPREAD, 1.0, 64, {"verdict": "OK"}, [], [])[0] is coarse
    assert seen == []


@pytest.mark.filterwarnings("ignore")
def test_the_real_check_refuses_the_coarse_step_where_the_robot_diverges_there(tmp_path):
    """The ANYbotics-style model at kp 100 / kd 3 diverges in random rollouts at 0.01 s: it keeps its 0.005 s."""
    spec = anymal_c(tmp_path, actuators=DAMPED, sim=SimOverrides(timestep=0.005, iterations=20, ls_iterations=20))
    log: list[str] = []
    with quiet_mujoco_warnings():
        found, report = fix_step.coarser_step(spec, SceneOptions(), SPREAD, 2.0, 128, {"verdict": "OK"}, log, [])
    assert found is spec and report == {"verdict": "OK"}
    assert log[0].startswith("timestep 0.01 s x 2 substeps: FAIL, ") and " 0 of 128 " not in log[0], log


def test_the_spec_substeps_are_the_tasks_decimation_and_the_trials_hold_actions_for_them(tmp_path):
    spec = anymal_c(tmp_path, sim=SimOverrides(timestep=0.01, substeps=2))
    assert flat_task("x", spec).default_config().env.decimation == 2
    assert rough_task("x", spec).default_config().env.decimation == 2
    assert flat_task("x", anymal_c(tmp_path)).default_config().env.decimation == 4  # none set: the task's
    own = flat_task("x", spec, defaults=TaskDefaults(decimation=3)).default_config()
    assert own.env.decimation == 3
    cli = apply_overrides(flat_task("x", spec).default_config(), dict([parse_override("env.decimation=4")]))
    assert cli.env.decimation == 4
    held = [solver_trial(build(dataclasses.replace(spec, sim=sim)), 20, 20, "elliptic", 8, seconds=0.2)
            for sim in (spec.sim, dataclasses.replace(spec.sim, substeps=8))]
    assert held[0].diverged == held[1].diverged == 0.0
