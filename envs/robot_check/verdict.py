"""The robot check's verdict: ``OK``, ``WARN`` (trains, read the advice) or ``FAIL`` (fix before training), each
problem with its numbers and what to change (``advice.py``), from the simulations of ``trials.py``, ``servo.py``
and ``rollouts.py``. ``tools/check_robot.py`` is the command; ``fix.py`` searches settings that pass it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import mujoco
import torch

from contract.errors import UserError
from envs.registry import TaskSpec
from envs.robot_check.advice import (
    CONVERGED_SOLVER,
    DIVERGENCE_RATE,
    Findings,
    cone_finding,
    divergence_finding,
    file_contact,
    model_contact,
    overshoot_limits,
    servo_findings,
    standing_findings,
    stands,
    supported_note,
)
from envs.robot_check.rollouts import ROLLOUTS, ResetSpread, SolverTrial, rate_text, solver_trial, with_solver
from envs.robot_check.servo import step_response
from envs.robot_check.text import num, pct
from envs.robot_check.trials import Standing, is_biped, quiet_mujoco_warnings, standing
from envs.robots.resolved import ResolvedRobot
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.track.config import TrackEnvConfig
from envs.tasks.track.robot import tracking_robot

RANDOM_ROLLOUTS = ROLLOUTS
"""Rollouts of 2 s of random actions with pushes under the task's solver settings (``rollouts.solver_trial``)."""
SCREEN_ROLLOUTS = 128
"""Rollouts per setting of the solver search before the cheapest passing ones are run with RANDOM_ROLLOUTS."""
SPEED_TIE = 0.05
"""Solver settings within this share of the fastest passing one count as as fast (the cheaper one is named)."""
SOLVER_GRID = ((2, 4, "pyramidal"), (4, 6, "pyramidal"), (8, 10, "pyramidal"), (20, 20, "pyramidal"),
               (100, 50, "pyramidal"), (4, 6, "elliptic"), (8, 10, "elliptic"), (20, 20, "elliptic"),
               (50, 50, "elliptic"), (100, 50, "elliptic"))
"""(iterations, ls_iterations, cone) tried by ``--solver``, cheapest first (100 / 50: MuJoCo's defaults). The
solver stops early once converged, so the cap matters on hard contacts: the steps/s tell."""


TRACK_BASE_VEL = 0.5
"""A tracking task's resets start at its clip's velocities; the check runs without a clip and spreads each base
velocity component over [-TRACK_BASE_VEL, TRACK_BASE_VEL] (m/s, rad/s) as the locomotion tasks' resets do
(``init_base_vel``)."""


def tracking_config(task: TaskSpec) -> TrackEnvConfig | None:
    """The task's default env config when it is a tracking task of a ``RobotSpec`` (``configs/track.py``)."""
    cfg = task.default_config().env
    return cfg if isinstance(cfg, TrackEnvConfig) and task.robot is not None else None


def env_config(task: TaskSpec) -> LocomotionEnvConfig:
    """The task's default env config (a locomotion task's, else one line)."""
    cfg = task.default_config().env
    if not isinstance(cfg, LocomotionEnvConfig):
        raise UserError(f"--task {task.name}: not a locomotion or tracking task (the robot check needs a RobotSpec)")
    return cfg


def robot_of(task: TaskSpec) -> ResolvedRobot:
    """The task's resolved robot, built as training builds it (its env config, checks first; native, one env). A
    tracking task's: every joint trained, at its held or welded pose (``envs/tasks/track/robot.py``), its solver;
    no clip is needed (a clip in the task's own config releases the welded joints it moves)."""
    track = tracking_config(task)
    if track is not None:
        assert task.robot is not None
        return tracking_robot(task.robot, track)
    cfg = env_config(task)
    if task.validate is not None:
        task.validate(cfg)
    env = task.make_env(dataclasses.replace(cfg, num_envs=1, backend="native", physics_threads=1), torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env.robot


def spread_of(cfg: LocomotionEnvConfig) -> ResetSpread:
    rnd = cfg.randomization
    return ResetSpread(rnd.init_joint_scale, rnd.init_base_vel)


def task_spread(task: TaskSpec) -> ResetSpread:
    """How the task's resets spread the start state; a tracking task's: its start noise on the joints
    (``env.start.joint_pos``), TRACK_BASE_VEL on the base."""
    track = tracking_config(task)
    if track is not None:
        return ResetSpread(base_vel=TRACK_BASE_VEL, joint_offset=track.start.joint_pos)
    return spread_of(env_config(task))


def tracking_note(cfg: TrackEnvConfig) -> str:
    """The note of a tracking task's check: what differs from a locomotion task's."""
    return (f"a tracking task: every joint trained (held joints step too: judged on their step response); standing "
            f"at the default pose (no clip needed: a clip's first frame need not stand still); random actions from "
            f"the default pose with the task's start noise (joints +-{num(cfg.start.joint_pos)} rad, base velocity "
            f"+-{num(TRACK_BASE_VEL)} m/s)")


def check(task: TaskSpec, solver: bool = False, seconds: float = 4.0,
          rollouts: int = RANDOM_ROLLOUTS) -> dict[str, Any]:
    """Run the check on the task's robot; the report as a JSON-ready dict (``verdict``, ``problems``, ``advice``,
    ``notes``, ``solver_advice`` and the numbers)."""
    t0 = time.perf_counter()
    with quiet_mujoco_warnings():
        robot = robot_of(task)
        report = evaluate(robot, task_spread(task), seconds, rollouts)
        if solver:
            solver_search(robot, report, task_spread(task), seconds)
    track = tracking_config(task)
    if track is not None:
        report["notes"].insert(0, tracking_note(track))
    report["task"] = task.name
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return report


def judged_standing(robot: ResolvedRobot, seconds: float, model: mujoco.MjModel | None = None
                    ) -> tuple[Standing, Standing]:
    """(the standing trial judged, the free one): a biped that does not stand on its own is judged supported."""
    free = standing(robot, seconds, model=model)
    if is_biped(robot) and not stands(free, robot):
        return standing(robot, seconds, supported=True, model=model), free
    return free, free


def evaluate(robot: ResolvedRobot, spread: ResetSpread, seconds: float = 4.0, rollouts: int = RANDOM_ROLLOUTS,
             own: SolverTrial | None = None) -> dict[str, Any]:
    """The whole check on a resolved robot (no task needed): standing, step responses, random actions (``own``:
    the random-action trial of the robot's solver settings, already run)."""
    opt = robot.model.opt
    now = model_contact(robot.model)
    stand, free = judged_standing(robot, seconds)
    converged = converged_standing(robot, seconds)
    steps = step_response(robot)
    if own is None:
        own = solver_trial(robot, opt.iterations, opt.ls_iterations, now.cone, rollouts, spread=spread)
    f = Findings()
    bad = servo_findings(steps, opt.timestep, opt.integrator == mujoco.mjtIntegrator.mjINT_EULER, f,
                         overshoot_limits(robot))
    standing_findings(robot, stand, steps, bad, (now, file_contact(robot)), f, converged)
    if stand.supported and stands(stand, robot, converged):
        f.notes.append(supported_note(free))
    divergence_finding(own, opt, f)
    cone_finding(now, file_contact(robot), f)
    return {
        "task": "", "robot": robot.spec.name, "verdict": "FAIL" if f.problems else "WARN" if f.advice else "OK",
        "problems": f.problems, "advice": f.advice, "notes": f.notes, "solver_advice": "",
        "solver": {"timestep": opt.timestep, "iterations": opt.iterations, "ls_iterations": opt.ls_iterations,
                   "cone": now.cone, "impratio": now.impratio, "random_actions": dataclasses.asdict(own),
                   "reset_spread": dataclasses.asdict(spread)},
        "standing": dataclasses.asdict(stand), "standing_free": dataclasses.asdict(free),
        "step_response": [dataclasses.asdict(s) for s in steps], "solver_trials": [],
    }


def converged_standing(robot: ResolvedRobot, seconds: float, cone: str | None = None) -> Standing | None:
    """The judged standing trial under CONVERGED_SOLVER with ``cone`` (else the robot's cone), or None when the
    robot runs that solver already and no cone is named (``advice.sag_floor``)."""
    opt = robot.model.opt
    if cone is None and (opt.iterations, opt.ls_iterations) == CONVERGED_SOLVER:
        return None
    own = "elliptic" if opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal"
    return judged_standing(robot, seconds, with_solver(robot.model, *CONVERGED_SOLVER, cone or own))[0]


def passes(robot: ResolvedRobot, model: mujoco.MjModel, trial: SolverTrial, seconds: float,
           converged: Standing | None = None) -> bool:
    """A solver setting passes when its rollouts stay under the divergence rate and the robot stands (or, a
    biped, holds its pose supported) with it (``converged``: the standing under CONVERGED_SOLVER)."""
    return trial.rate <= DIVERGENCE_RATE and stands(judged_standing(robot, seconds, model)[0], robot, converged)


def solver_search(robot: ResolvedRobot, report: dict[str, Any], spread: ResetSpread, seconds: float) -> None:
    """Each setting of SOLVER_GRID judged by the whole check (standing and SCREEN_ROLLOUTS random rollouts); the
    cheapest passing ones in turn run RANDOM_ROLLOUTS until one passes: it is named (information, not part of
    the verdict). Adds ``solver_trials`` and ``solver_advice`` to ``report``."""
    impratio = float(robot.model.opt.impratio)
    rows: list[tuple[SolverTrial, bool]] = []
    converged = {c: converged_standing(robot, seconds, c) for c in dict.fromkeys(c for _, _, c in SOLVER_GRID)}
    for it, ls, cone in SOLVER_GRID:
        m = with_solver(robot.model, it, ls, cone)
        trial = solver_trial(robot, it, ls, cone, SCREEN_ROLLOUTS, spread=spread)
        rows.append((trial, passes(robot, m, trial, seconds, converged[cone])))
    report["solver_trials"] = [dict(dataclasses.asdict(t), standing_ok=ok) for t, ok in rows]
    ok = [t for t, good in rows if good]
    fastest = max((t.steps_per_s for t in ok), default=0.0)
    order = [t for t in ok if t.steps_per_s >= (1.0 - SPEED_TIE) * fastest] + [t for t in ok]
    for t in dict.fromkeys(order):
        full = solver_trial(robot, t.iterations, t.ls_iterations, t.cone, RANDOM_ROLLOUTS, spread=spread)
        if passes(robot, with_solver(robot.model, t.iterations, t.ls_iterations, t.cone), full, seconds,
                  converged[t.cone]):
            report["solver_advice"] = (
                f"cheapest solver that passes the check: SimOverrides(iterations={t.iterations}, "
                f"ls_iterations={t.ls_iterations}, cone={t.cone!r}) at {num(t.steps_per_s)} physics steps/s (CPU "
                f"time), impratio {num(impratio)}; {full.rollouts} rollouts, {rate_text(full.rate)} diverged per step")
            return
    report["problems"].append("no solver setting tried passes the check (standing, and random actions and pushes "
                              "without divergence): lower the timestep, add armature, lower kp / kd")
    report["verdict"] = "FAIL"


def render(report: dict[str, Any]) -> str:
    """The report as a few lines for the console."""
    s = report["standing"]
    lines = [f"robot check of {report['task']} ({report['robot']}): {report['verdict']}"]
    lines.append(_standing_line(s, "standing, base supported," if s.get("supported") else "standing"))
    if s.get("supported"):
        lines.append(_standing_line(report["standing_free"], "standing on its own"))
    sv = report["solver"]
    ra = sv["random_actions"]
    lines.append(f"  random actions with pushes from the task's resets, the task's solver ({sv['iterations']} / "
                 f"{sv['ls_iterations']} iterations, {sv['cone']}, impratio {num(sv.get('impratio', 0.0))}, "
                 f"timestep {num(sv['timestep'])} s): diverged {round(ra['diverged'] * ra['rollouts'])} of "
                 f"{ra['rollouts']} rollouts ({rate_text(ra['rate'])} per step)")
    for r in report["step_response"]:
        cut = " (cut to the joint's range)" if r.get("step_limited") else ""
        lines.append(f"  step {r['group']} (kp {num(r['kp'])}, kd {num(r['kd'])}, damping ratio "
                     f"{num(r.get('damping_ratio', 0.0))}, {num(r['step'])} rad{cut}): rise {num(r['rise_time'])} s, "
                     f"overshoot {pct(r['overshoot'])}, error after 0.5 s {pct(r['steady_state_error'])}")
    for t in report["solver_trials"]:
        lines.append(f"  solver {t['iterations']}/{t['ls_iterations']} {t['cone']}: diverged "
                     f"{round(t['diverged'] * t['rollouts'])} of {t['rollouts']}, standing "
                     f"{'ok' if t['standing_ok'] else 'FAIL'}, {num(t['steps_per_s'])} physics steps/s")
    lines += [f"  problem: {p}" for p in report["problems"]] + [f"  advice: {a}" for a in report["advice"]]
    lines += [f"  note: {n}" for n in report.get("notes", [])]
    if report["solver_advice"]:
        lines.append(f"  {report['solver_advice']}")
    lines.append(f"  ({num(report['seconds'])} s)")
    return "\n".join(lines)


def _standing_line(s: dict[str, Any], how: str) -> str:
    div = "" if s["diverged_at"] is None else f", DIVERGED at {num(s['diverged_at'])} s"
    tilt = math.degrees(s["tilt"]) if s["tilt"] == s["tilt"] else float("nan")
    drift = max(s.get("foot_drift", {}).values(), default=0.0)
    splay = max((abs(e) for e in s.get("splay", {}).values()), default=0.0)
    far = ", ".join(f"{j} {num(e)}" for j, e in s.get("pose_error", {}).items())
    return (f"  {how} {num(s['seconds'])} s: base {num(s['base_height'])} m, tilt {num(tilt)} deg, non-foot contacts "
            f"{', '.join(f'{b} {pct(v)}' for b, v in s['contacts'].items()) or 'none'}, foot drift up to "
            f"{num(drift)} m, sideways joints off up to {num(splay)} rad, furthest from pose (rad): {far or '-'}{div}")
