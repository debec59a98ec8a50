"""The robot check's verdict: ``OK``, ``WARN`` (trains, read the advice) or ``FAIL`` (fix before training), each
problem with its numbers and what to change, from the simulations of ``trials.py``. The thresholds are the
constants below; ``tools/check_robot.py`` is the command.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import torch

from envs.registry import TaskSpec
from envs.robot_check.trials import solver_trial, standing, step_response
from envs.robots.resolved import ResolvedRobot
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion_config import LocomotionEnvConfig
from rl_core.errors import UserError

SAG = 0.8
"""The base settling below this share of ``base_height`` is a sag (the built-in robots stand at 0.9 to 1.0)."""
FALL_TILT = 0.5
"""A tilt above this (rad) while standing is a fall."""
CONTACT_SHARE = 0.05
"""A non-foot body touching the floor more than this share of the standing steps fires."""
LIMIT_SHARE = 0.5
"""A joint at its limit more than this share of the last second is pinned there."""
SATURATION_SHARE = 0.1
"""A servo saturated more than this share of the last second cannot hold the pose."""
OVERSHOOT = 0.5
"""Step-response overshoot above this share of the step: underdamped."""
STEADY_STATE = 0.5
"""Step-response error above this share of the step after 0.5 s: the gain is low for the leg's own weight."""
UNSTABLE = 1.0
"""Step-response overshoot or error above this share of the step: the servo itself is unstable (explicit
damping too strong for the joint's inertia at this timestep)."""
RISE_TIME = 0.15
"""Step-response rise time above this (s): slow for a 50 Hz policy."""
SPEED_TIE = 0.05
"""Solver settings within this share of the fastest stable one count as as fast (the cheaper one is named)."""
SOLVER_GRID = ((2, 4, "pyramidal"), (4, 6, "pyramidal"), (8, 10, "pyramidal"),
               (20, 20, "pyramidal"), (100, 50, "pyramidal"), (4, 6, "elliptic"), (100, 50, "elliptic"))
"""(iterations, ls_iterations, cone) tried by ``--solver``, cheapest first (100 / 50: MuJoCo's defaults). The
solver stops early once converged, so the cap matters on hard contacts: the steps/s tell."""


def robot_of(task: TaskSpec) -> ResolvedRobot:
    """The task's resolved robot, built as training builds it (its env config, checks first; native, one env)."""
    cfg = task.default_config().env
    if not isinstance(cfg, LocomotionEnvConfig):
        raise UserError(f"--task {task.name}: not a locomotion task (the robot check needs a RobotSpec)")
    if task.validate is not None:
        task.validate(cfg)
    env = task.make_env(dataclasses.replace(cfg, num_envs=1, backend="native", physics_threads=1), torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env.robot


def check(task: TaskSpec, solver: bool = False, seconds: float = 4.0) -> dict[str, Any]:
    """Run the check on the task's robot; the report as a JSON-ready dict (``verdict``, ``problems``, ``advice``,
    ``solver_advice`` and the numbers)."""
    t0 = time.perf_counter()
    robot = robot_of(task)
    spec = robot.spec
    stand = standing(robot, seconds)
    steps = step_response(robot)
    problems: list[str] = []
    advice: list[str] = []
    gains = ", ".join(f"{s.group}: kp {s.kp:g} / kd {s.kd:g}" for s in steps)
    unstable = [s for s in steps if s.overshoot > UNSTABLE or s.steady_state_error > UNSTABLE]
    for s in unstable:
        problems.append(f"{s.group}: the servo is unstable (step response overshoot {100 * s.overshoot:.0f}%, "
                        f"{100 * s.steady_state_error:.0f}% of the step off after 0.5 s): lower kd (now {s.kd:g}) "
                        f"or kp (now {s.kp:g}), add armature, or lower the timestep ({robot.model.opt.timestep:g} s)")
    fix = "fix the unstable servos first" if unstable else f"raise kp ({gains}) or lower base_height"
    if stand.diverged_at is not None:
        problems.append(f"the simulation diverges at {stand.diverged_at:.2f} s standing still: raise the solver "
                        f"iterations (now {robot.model.opt.iterations} / {robot.model.opt.ls_iterations}), lower "
                        f"the timestep ({robot.model.opt.timestep:g} s), add armature or lower kd")
    else:
        ratio = stand.base_height / spec.base_height
        fired = {b: s for b, s in stand.contacts.items() if s > CONTACT_SHARE}
        fired_text = "; " + ", ".join(fired) + " contacts fire" if fired else ""
        if stand.tilt > FALL_TILT:
            problems.append(f"falls over standing still (tilt {math.degrees(stand.tilt):.0f} deg, base at "
                            f"{stand.base_height:.2f} m){fired_text}: raise kp / kd ({gains}), check default_pose "
                            f"(is it balanced over the feet?)")
        elif ratio < SAG:
            problems.append(f"base settles at {stand.base_height:.2f} m of {spec.base_height:.2f} m "
                            f"({100 * ratio:.0f}%){fired_text}: {fix}")
        elif fired:
            problems.append(f"{', '.join(fired)} contacts fire standing still (base at {stand.base_height:.2f} m of "
                            f"{spec.base_height:.2f} m): check default_pose and foot_geoms / foot_bodies")
        elif ratio > 1.02:
            advice.append(f"base settles at {stand.base_height:.2f} m, above base_height {spec.base_height:.2f} m: "
                          f"the reset puts the feet into the floor; raise base_height")
        pinned = {j: s for j, s in stand.at_limit.items() if s > LIMIT_SHARE}
        if pinned:
            advice.append(f"joints at their limit standing still: {', '.join(pinned)}: check default_pose against "
                          f"the joint ranges")
        saturated = {j: s for j, s in stand.saturation.items() if s > SATURATION_SHARE}
        if saturated and not unstable:
            problems.append(f"servos at their effort limit standing still: {', '.join(saturated)}: raise "
                            f"effort_limit or lower the robot's load (base_height, default_pose)")
    for s in steps:
        if s in unstable:
            continue
        if s.overshoot > OVERSHOOT:
            advice.append(f"{s.group}: step response overshoots by {100 * s.overshoot:.0f}%: raise kd (now "
                          f"{s.kd:g}) or add armature")
        if s.steady_state_error > STEADY_STATE:
            advice.append(f"{s.group}: {100 * s.steady_state_error:.0f}% of the step left after 0.5 s: raise kp "
                          f"(now {s.kp:g})")
        elif s.rise_time > RISE_TIME:
            advice.append(f"{s.group}: rise time {s.rise_time:.3f} s: raise kp (now {s.kp:g}) or lower kd "
                          f"(now {s.kd:g})")
    trials = []
    solver_advice = ""
    if solver:
        trials = [solver_trial(robot, it, ls, cone) for it, ls, cone in SOLVER_GRID]
        stable = [t for t in trials if t.diverged == 0.0]
        if stable:
            fastest = max(t.steps_per_s for t in stable)
            best = next(t for t in stable if t.steps_per_s >= (1.0 - SPEED_TIE) * fastest)  # the grid is cheapest first
            solver_advice = (f"cheapest stable solver: SimOverrides(iterations={best.iterations}, "
                             f"ls_iterations={best.ls_iterations}, cone={best.cone!r}) at {best.steps_per_s} "
                             f"physics steps/s (one thread, CPU time)")
        else:
            problems.append("every solver setting tried diverges under random actions and pushes: lower the "
                            "timestep, add armature, lower kp / kd")
    verdict = "FAIL" if problems else "WARN" if advice else "OK"
    return {
        "task": task.name, "robot": spec.name, "verdict": verdict, "problems": problems, "advice": advice,
        "solver_advice": solver_advice,
        "solver": {"timestep": robot.model.opt.timestep, "iterations": robot.model.opt.iterations,
                   "ls_iterations": robot.model.opt.ls_iterations,
                   "cone": "elliptic" if robot.model.opt.cone == 1 else "pyramidal"},
        "standing": dataclasses.asdict(stand), "step_response": [dataclasses.asdict(s) for s in steps],
        "solver_trials": [dataclasses.asdict(t) for t in trials], "seconds": round(time.perf_counter() - t0, 1),
    }


def render(report: dict[str, Any]) -> str:
    """The report as a few lines for the console."""
    s = report["standing"]
    lines = [f"robot check of {report['task']} ({report['robot']}): {report['verdict']}"]
    div = "" if s["diverged_at"] is None else f", DIVERGED at {s['diverged_at']:.2f} s"
    lines.append(f"  standing {s['seconds']:g} s: base {s['base_height']:.3f} m, tilt "
                 f"{math.degrees(s['tilt']) if s['tilt'] == s['tilt'] else float('nan'):.1f} deg, non-foot contacts "
                 f"{', '.join(f'{b} {100 * v:.0f}%' for b, v in s['contacts'].items()) or 'none'}{div}")
    for r in report["step_response"]:
        lines.append(f"  step {r['group']} (kp {r['kp']:g}, kd {r['kd']:g}, {r['step']:.2f} rad): rise "
                     f"{r['rise_time']:.3f} s, overshoot {100 * r['overshoot']:.0f}%, error after 0.5 s "
                     f"{100 * r['steady_state_error']:.0f}%")
    for t in report["solver_trials"]:
        lines.append(f"  solver {t['iterations']}/{t['ls_iterations']} {t['cone']}: diverged "
                     f"{100 * t['diverged']:.0f}%, {t['steps_per_s']} physics steps/s")
    lines += [f"  problem: {p}" for p in report["problems"]] + [f"  advice: {a}" for a in report["advice"]]
    if report["solver_advice"]:
        lines.append(f"  {report['solver_advice']}")
    lines.append(f"  ({report['seconds']:g} s)")
    return "\n".join(lines)
