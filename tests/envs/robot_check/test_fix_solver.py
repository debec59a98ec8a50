"""``check_robot --fix``'s solver search (``envs/robot_check/fix_solver.py``): the iterations of the ladder
cheapest first at the file's contact model, the first that passes the screening and then the full trial taken;
and ``SimOverrides.solver`` reaching the compiled model."""

from __future__ import annotations

import dataclasses

import mujoco
import pytest

from envs.robot_check import fix_solver
from envs.robot_check.rollouts import SolverTrial
from envs.robots.spec import SimOverrides
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions
from tests.envs.robot_check.test_check_cases import SPREAD, anymal_c


def _fake(monkeypatch, diverging: set[tuple[int, int]], full_diverging: set[tuple[int, int]] = frozenset()) -> list:
    """Every setting stands; the random-action trial diverges for ``diverging`` (and, its full trial only, for
    ``full_diverging``); returns the trials run as (iterations, ls, rollouts)."""
    runs: list = []

    def trial(robot, it, ls, cone, rollouts, spread=None):
        runs.append((it, ls, rollouts))
        bad = rollouts // 64 if (it, ls) in diverging or (rollouts > 128 and (it, ls) in full_diverging) else 0
        return SolverTrial(it, ls, cone, bad / rollouts, 1e4, rollouts, rollouts * 400, bad / (rollouts * 400), 100.0)

    monkeypatch.setattr(fix_solver, "solver_trial", trial)
    monkeypatch.setattr(fix_solver, "stands", lambda *a, **k: True)
    return runs


def _search(tmp_path):
    spec = anymal_c(tmp_path, sim=SimOverrides(timestep=0.005, iterations=100, ls_iterations=50))
    log: list[str] = []
    changes: list[str] = []
    found, trial = fix_solver.search_solver(spec, SceneOptions(), SPREAD, 0.2, 256, log, changes)
    return found, trial, log, changes


@pytest.mark.filterwarnings("ignore")
def test_the_cheapest_setting_that_passes_is_taken_and_nothing_dearer_is_tried(tmp_path, monkeypatch):
    runs = _fake(monkeypatch, set())
    found, trial, log, changes = _search(tmp_path)
    assert runs == [(4, 6, 128), (4, 6, 256)], runs
    assert (found.sim.iterations, found.sim.ls_iterations) == (4, 6) and trial.rollouts == 256
    assert found.sim.cone is None and found.sim.impratio is None  # the file's contact model
    assert changes == ["solver: solver 4 / 6, elliptic cone, impratio 100 (the cheapest that passes the check)"]


@pytest.mark.filterwarnings("ignore")
def test_a_setting_failing_its_screen_or_its_full_trial_moves_on_up_the_ladder(tmp_path, monkeypatch):
    runs = _fake(monkeypatch, {(4, 6)}, full_diverging={(8, 10)})
    found, trial, log, changes = _search(tmp_path)
    assert runs == [(4, 6, 128), (8, 10, 128), (8, 10, 256), (20, 20, 128), (20, 20, 256)], runs
    assert (found.sim.iterations, found.sim.ls_iterations) == (20, 20)
    assert [line.split(":")[1].strip() for line in log] == [
        "2 of 128 rollouts diverge, 10000 steps/s", "0 of 128 rollouts diverge, 10000 steps/s",
        "4 of 256 rollouts diverge, 10000 steps/s", "0 of 128 rollouts diverge, 10000 steps/s",
        "0 of 256 rollouts diverge, 10000 steps/s"], log


def test_the_specs_solver_reaches_the_compiled_model(tmp_path):
    cg = build(anymal_c(tmp_path, sim=SimOverrides(timestep=0.005, solver="cg", iterations=16, ls_iterations=16)))
    assert cg.model.opt.solver == mujoco.mjtSolver.mjSOL_CG and cg.model.opt.iterations == 16
    assert cg.model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and cg.model.opt.impratio == 100.0  # the file's
    own = build(anymal_c(tmp_path, sim=SimOverrides(timestep=0.005)))
    assert own.model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON  # None keeps the file's
    assert dataclasses.asdict(SimOverrides(solver="cg"))["solver"] == "cg"  # the --fix cache's JSON carries it
