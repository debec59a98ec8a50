"""``check_robot --fix``'s step 3: a coarser physics step, taken only when the whole check passes there.

The tasks control at 50 Hz in 4 physics steps of 0.005 s. After the gains and the solver are found, a robot whose
check is OK is checked again at COARSE_STEP (0.01 s in 2 substeps: the same control period at half the
physics' cost), at the solver settings just chosen: standing, feet not sliding, legs not splayed, the step
responses (an oscillating servo asks for a smaller step: not OK) and ROLLOUTS random rollouts at the task's control
rate. The spec takes it (``sim.timestep`` and ``sim.substeps``, which the tasks run as ``env.decimation``) only
when that check is OK too. There, as at any step coarser than 0.005 s, a servo's overshoot is judged against its own
overshoot at 0.005 s (``advice.overshoot_limits``: a coarser step rings a little more), so the check of the spec as
written agrees with the search's. On the Unitree-style test model the policy trained at 0.01 s reached the flat targets
in fewer iterations than at 0.005 s and walked on the file's own contact model in every rehearsal setting (stepped
at 1 ms there: the rehearsal's 1 kHz torque PD; docs/robots.md, "The physics step"). A biped is tried at no fewer
solver iterations than BIPED_SOLVER: the G1-style test model trained at 0.01 s with its 4 / 6 reached the humanoid
targets, but its later policies diverged in 2-4 of 100 evaluation episodes, none at 10 / 10 (which ran as fast).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from envs.robot_check.advice import model_contact
from envs.robot_check.rollouts import DECIMATION, ResetSpread, solver_trial
from envs.robot_check.text import num
from envs.robot_check.verdict import evaluate
from envs.robots.spec import RobotSpec
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions

COARSE_STEP = 0.01
"""The physics step tried (s): MuJoCo's default contact time constant (0.02 s) is still twice it."""
MIN_FEET = 4
"""Robots with fewer feet (bipeds) take COARSE_STEP only at BIPED_SOLVER's iterations or more."""
BIPED_SOLVER = (10, 10)
"""The fewest solver / line-search iterations a biped runs at COARSE_STEP."""


def coarser_step(spec: RobotSpec, scene: SceneOptions, spread: ResetSpread, seconds: float, rollouts: int,
                 report: dict[str, Any], log: list[str], changes: list[str]) -> tuple[RobotSpec, dict[str, Any]]:
    """(the spec at COARSE_STEP and its whole check) when it passes there (module docstring), else (``spec``,
    ``report``: its check at its own step). One line in ``log`` when tried, the change in ``changes``."""
    robot = build(spec, scene)
    opt = robot.model.opt
    substeps = spec.sim.substeps or DECIMATION
    control = substeps * opt.timestep
    coarse_substeps = round(control / COARSE_STEP)
    if (report["verdict"] != "OK" or opt.timestep >= COARSE_STEP - 1e-9
            or coarse_substeps < 1 or abs(coarse_substeps * COARSE_STEP - control) > 1e-9):
        return spec, report
    it, ls = opt.iterations, opt.ls_iterations
    if robot.num_feet < MIN_FEET:
        it, ls = max(it, BIPED_SOLVER[0]), max(ls, BIPED_SOLVER[1])
    more = {} if (it, ls) == (opt.iterations, opt.ls_iterations) else {"iterations": it, "ls_iterations": ls}
    cand = dataclasses.replace(spec, sim=dataclasses.replace(spec.sim, timestep=COARSE_STEP, substeps=coarse_substeps,
                                                             **more))
    rb = build(cand, scene)
    trial = solver_trial(rb, it, ls, model_contact(robot.model).cone, rollouts, spread=spread)
    coarse = evaluate(rb, spread, seconds, rollouts, own=trial)
    what = f"timestep {num(COARSE_STEP)} s x {coarse_substeps} substeps"
    log.append(f"{what}: {coarse['verdict']}, {round(trial.diverged * trial.rollouts)} of {trial.rollouts} "
               f"rollouts diverge, {num(trial.steps_per_s)} steps/s")
    if coarse["verdict"] != "OK":
        return spec, report
    solver = (f", solver {it} / {ls} iterations instead of {opt.iterations} / {opt.ls_iterations} (a biped's "
              "fewest there)" if more else "")
    changes.append(f"physics step: {num(COARSE_STEP)} s x {coarse_substeps} per {num(control)} s control step "
                   f"instead of {num(opt.timestep)} s x {substeps}{solver} (the whole check passes there; half the "
                   "physics' cost)")
    return cand, coarse


def solver_floor(spec: RobotSpec, scene: SceneOptions, ladder: tuple[tuple[int, int], ...]
                 ) -> tuple[tuple[int, int], ...]:
    """``ladder`` (the solver search's, ``fix_solver``) with each rung raised to BIPED_SOLVER for a biped already at
    COARSE_STEP, so a second ``--fix`` keeps what the first chose; else ``ladder`` as it is."""
    robot = build(spec, scene)
    if robot.num_feet >= MIN_FEET or robot.model.opt.timestep < COARSE_STEP - 1e-9:
        return ladder
    return tuple(dict.fromkeys((max(it, BIPED_SOLVER[0]), max(ls, BIPED_SOLVER[1])) for it, ls in ladder))
