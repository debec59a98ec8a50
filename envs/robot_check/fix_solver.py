"""``check_robot --fix``'s step 2: the solver settings a robot trains with, searched at the contact model its spec
runs (the robot file's cone and impratio unless the spec sets them).

The iterations of ITERATION_LADDER, cheapest first, each judged by the whole check (standing, feet not sliding,
legs not splayed, SCREEN_ROLLOUTS random rollouts, then the full trial): the first that passes is taken. Only when
none passes at the spec's contact model, the other cone (a pyramidal cone at impratio 1: MuJoCo advises against a
high impratio with it), said in one line with the reason. The constraint solver stays the file's: CG at 16 / 16,
which passes the check on the Unitree-style test model at 1.6x Newton 20 / 20's physics steps/s, tracked no
better in the same 10 minutes and diverged in 1-2 of 100 episodes under the trained policy (docs/robots.md), so
the check's pass is not enough to pick a solver.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass

from envs.robot_check.advice import DIVERGENCE_RATE, HIGH_IMPRATIO, Contact, file_contact, model_contact, stands
from envs.robot_check.rollouts import ResetSpread, SolverTrial, solver_trial
from envs.robot_check.text import num
from envs.robot_check.verdict import SCREEN_ROLLOUTS, converged_standing, judged_standing
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions

ITERATION_LADDER = ((4, 6), (8, 10), (20, 20), (50, 50), (100, 50))
"""Solver iterations / line-search iterations tried, cheapest first (from the task's usual 4 / 6: whether a policy
trains as well at 2 / 4 was not measured)."""
FAST_LADDER = ITERATION_LADDER[2:]
"""The ladder of ``menagerie:NAME+fast`` (``envs/robots/menagerie.py`` ``fast_contact``), from 20 / 20: on the
Unitree-style test model 4 / 6 passes the check, but the policy trained there diverged in 1 of 100 evaluation
episodes at checkpoints 150 and 300 (0 of 100 when they ran at 20 / 20, which costs 3% more per step, 18.7 against 18.1
us: the pyramidal solve converges in about 2.5 iterations, so the cap only adds iterations to the hard steps;
docs/robots.md)."""


@dataclass(frozen=True, eq=False)
class Candidate:
    """One setting of ITERATION_LADDER at one contact model, built and screened."""

    spec: RobotSpec
    robot: ResolvedRobot
    iterations: int
    ls_iterations: int
    what: str
    """How the log and the changes name it."""
    screen: SolverTrial
    """Its screening trial (SCREEN_ROLLOUTS rollouts)."""


def spec_with_solver(spec: RobotSpec, iterations: int, ls: int, contact: Contact | None = None,
                     file: Contact | None = None) -> RobotSpec:
    """``spec`` at these iterations (and contact model, written only where it differs from the file's)."""
    sim = dataclasses.replace(spec.sim, iterations=iterations, ls_iterations=ls)
    if contact is not None and file is not None:
        sim = dataclasses.replace(sim, cone=None if contact.cone == file.cone else contact.cone,  # type: ignore[arg-type]
                                  impratio=None if contact.impratio == file.impratio else contact.impratio)
    return dataclasses.replace(spec, sim=sim)


def contacts(robot: ResolvedRobot) -> tuple[list[Contact], list[Contact]]:
    """(the contact model the spec runs, unless a pyramidal cone with a high impratio; the departures from it, tried
    only when it fails: the other cone, a pyramidal one at impratio 1)."""
    now = model_contact(robot.model)
    other = Contact("elliptic", max(now.impratio, 1.0)) if now.cone == "pyramidal" else Contact("pyramidal", 1.0)
    if now.cone == "pyramidal" and now.impratio > HIGH_IMPRATIO:
        return [], [other, Contact("pyramidal", 1.0)]
    return [now], [other]


def search_solver(spec: RobotSpec, scene: SceneOptions, spread: ResetSpread, seconds: float, rollouts: int,
                  log: list[str], changes: list[str], ladder: tuple[tuple[int, int], ...] = ITERATION_LADDER
                  ) -> tuple[RobotSpec, SolverTrial | None]:
    """The module docstring's search up ``ladder``: (the spec with the setting taken, its full trial), or
    (``spec``, None) when none passes. One line per trial in ``log``, the change made (and why) in ``changes``."""
    robot = build(spec, scene)
    file = file_contact(robot)
    own = (model_contact(robot.model), robot.model.opt.iterations, robot.model.opt.ls_iterations)
    kept, departures = contacts(robot)
    failed = "none tried"
    for contact in kept + departures:
        for c in _screened(spec, scene, spread, seconds, contact, file, rollouts, log, ladder):
            trial = c.screen
            if trial.rollouts < rollouts:
                trial = solver_trial(c.robot, c.iterations, c.ls_iterations, contact.cone, rollouts, spread=spread)
                log.append(_trial_line(c.what, trial))
            if trial.rate > DIVERGENCE_RATE:
                continue
            if (contact, c.iterations, c.ls_iterations) == own:
                return spec, trial  # the spec's own settings: nothing to change
            changes.append(f"solver: {c.what} (the cheapest that passes the check)")
            if contact != own[0]:
                why = (f"a pyramidal cone at impratio {num(own[0].impratio)} is not advised (MuJoCo)" if not kept else
                       f"no solver setting passes with it (the last: {failed})")
                changes.append(f"contact: {contact.text()} instead of {own[0].text()}"
                               f"{' (the file' + chr(39) + 's)' if own[0] == file else ''}: {why}")
            return c.spec, trial
        if contact in kept and log:
            failed = log[-1]
    return spec, None


def _screened(spec: RobotSpec, scene: SceneOptions, spread: ResetSpread, seconds: float, contact: Contact,
              file: Contact, rollouts: int, log: list[str], ladder: tuple[tuple[int, int], ...]
              ) -> Iterator[Candidate]:
    """The settings of ``ladder`` at ``contact``, cheapest first, that stand and pass the screening rollouts."""
    converged = None
    for it, ls in ladder:
        cand = spec_with_solver(spec, it, ls, contact, file)
        rb = build(cand, scene)
        what = f"solver {it} / {ls}, {contact.text()}"
        if converged is None:
            converged = (converged_standing(rb, seconds),)
        stand = judged_standing(rb, seconds)[0]
        if not stands(stand, rb, converged[0]):
            drift = max(stand.foot_drift.values(), default=0.0)
            log.append(f"{what}: does not stand (base {num(stand.base_height)} m, tilt "
                       f"{num(math.degrees(stand.tilt))} deg, feet slide up to {num(drift)} m)")
            continue
        screen = solver_trial(rb, it, ls, contact.cone, min(SCREEN_ROLLOUTS, rollouts), spread=spread)
        log.append(_trial_line(what, screen))
        if screen.rate <= DIVERGENCE_RATE:
            yield Candidate(cand, rb, it, ls, what, screen)


def _trial_line(what: str, trial: SolverTrial) -> str:
    return (f"{what}: {round(trial.diverged * trial.rollouts)} of {trial.rollouts} rollouts diverge, "
            f"{num(trial.steps_per_s)} steps/s")
