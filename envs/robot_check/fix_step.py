"""``check_robot --fix``'s step 3: a coarser physics step for a quadruped, taken only when the whole check passes
there.

The tasks control at 50 Hz in 4 physics steps of 0.005 s. After the gains and the solver are found, a quadruped
whose check is OK is checked again at COARSE_STEP (0.01 s in 2 substeps: the same control period at half the
physics' cost), at the solver settings just chosen: standing, feet not sliding, legs not splayed, the step
responses (an oscillating servo asks for a smaller step: not OK) and ROLLOUTS random rollouts at the task's control
rate. The spec takes it (``sim.timestep`` and ``sim.substeps``, which the tasks run as ``env.decimation``) only
when that check is OK too. On the Unitree-style test model the policy trained at 0.01 s reached the flat targets
in fewer iterations than at 0.005 s and walked on the file's own contact model in every rehearsal setting (stepped
at 1 ms there: the rehearsal's 1 kHz torque PD; docs/robots.md, "The physics step"). A biped keeps its step:
none was trained at 0.01 s.
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
"""Robots with fewer feet keep their step (a biped was not trained at COARSE_STEP)."""


def coarser_step(spec: RobotSpec, scene: SceneOptions, spread: ResetSpread, seconds: float, rollouts: int,
                 report: dict[str, Any], log: list[str], changes: list[str]) -> tuple[RobotSpec, dict[str, Any]]:
    """(the spec at COARSE_STEP and its whole check) when it passes there (module docstring), else (``spec``,
    ``report``: its check at its own step). One line in ``log`` when tried, the change in ``changes``."""
    robot = build(spec, scene)
    opt = robot.model.opt
    substeps = spec.sim.substeps or DECIMATION
    control = substeps * opt.timestep
    coarse_substeps = round(control / COARSE_STEP)
    if (report["verdict"] != "OK" or robot.num_feet < MIN_FEET or opt.timestep >= COARSE_STEP - 1e-9
            or coarse_substeps < 1 or abs(coarse_substeps * COARSE_STEP - control) > 1e-9):
        return spec, report
    cand = dataclasses.replace(spec, sim=dataclasses.replace(spec.sim, timestep=COARSE_STEP, substeps=coarse_substeps))
    rb = build(cand, scene)
    trial = solver_trial(rb, opt.iterations, opt.ls_iterations, model_contact(robot.model).cone, rollouts,
                         spread=spread)
    coarse = evaluate(rb, spread, seconds, rollouts, own=trial)
    what = f"timestep {num(COARSE_STEP)} s x {coarse_substeps} substeps"
    log.append(f"{what}: {coarse['verdict']}, {round(trial.diverged * trial.rollouts)} of {trial.rollouts} "
               f"rollouts diverge, {num(trial.steps_per_s)} steps/s")
    if coarse["verdict"] != "OK":
        return spec, report
    changes.append(f"physics step: {num(COARSE_STEP)} s x {coarse_substeps} per {num(control)} s control step "
                   f"instead of {num(opt.timestep)} s x {substeps} (the whole check passes there; half the physics' "
                   "cost)")
    return cand, coarse
