"""The robot check's verdict: ``OK``, ``WARN`` (trains, read the advice) or ``FAIL`` (fix before training), each
problem with its numbers and what to change, from the simulations of ``trials.py``. The thresholds are the
constants below; ``tools/check_robot.py`` is the command.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import mujoco
import torch

from envs.registry import TaskSpec
from apps.robot_check.trials import (ResetSpread, SolverTrial, Standing, StepResponse, quiet_mujoco_warnings,
                                     solver_trial, standing, step_response)
from envs.robots.resolved import ResolvedRobot
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion_config import LocomotionEnvConfig
from contract.errors import UserError

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
STILL_MOVING = 1.0
"""A joint still moving faster than this (rad/s) at the end of the step response oscillates: unstable too (its
force limit bounds the oscillation, so the overshoot and error alone can look moderate)."""
RISE_TIME = 0.15
"""Step-response rise time above this (s): slow for a 50 Hz policy."""
RANDOM_ROLLOUTS = 16
"""Rollouts of 2 s of random actions with pushes per solver setting (``trials.solver_trial``)."""
SPEED_TIE = 0.05
"""Solver settings within this share of the fastest stable one count as as fast (the cheaper one is named)."""
SOLVER_GRID = ((2, 4, "pyramidal"), (4, 6, "pyramidal"), (8, 10, "pyramidal"),
               (20, 20, "pyramidal"), (100, 50, "pyramidal"), (4, 6, "elliptic"), (100, 50, "elliptic"))
"""(iterations, ls_iterations, cone) tried by ``--solver``, cheapest first (100 / 50: MuJoCo's defaults). The
solver stops early once converged, so the cap matters on hard contacts: the steps/s tell."""


def env_config(task: TaskSpec) -> LocomotionEnvConfig:
    """The task's default env config (a locomotion task's, else one line)."""
    cfg = task.default_config().env
    if not isinstance(cfg, LocomotionEnvConfig):
        raise UserError(f"--task {task.name}: not a locomotion task (the robot check needs a RobotSpec)")
    return cfg


def robot_of(task: TaskSpec) -> ResolvedRobot:
    """The task's resolved robot, built as training builds it (its env config, checks first; native, one env)."""
    cfg = env_config(task)
    if task.validate is not None:
        task.validate(cfg)
    env = task.make_env(dataclasses.replace(cfg, num_envs=1, backend="native", physics_threads=1), torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env.robot


def check(task: TaskSpec, solver: bool = False, seconds: float = 4.0) -> dict[str, Any]:
    """Run the check on the task's robot; the report as a JSON-ready dict (``verdict``, ``problems``, ``advice``,
    ``solver_advice`` and the numbers)."""
    with quiet_mujoco_warnings():
        return _check(task, solver, seconds)


def _check(task: TaskSpec, solver: bool, seconds: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    robot = robot_of(task)
    rnd = env_config(task).randomization
    spread = ResetSpread(rnd.init_joint_scale, rnd.init_base_vel)
    opt = robot.model.opt
    cone = "elliptic" if opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal"
    stand = standing(robot, seconds)
    steps = step_response(robot)
    own = solver_trial(robot, opt.iterations, opt.ls_iterations, cone, RANDOM_ROLLOUTS, repeats=1,
                       spread=spread)
    problems: list[str] = []
    advice: list[str] = []
    unstable = _servo_findings(steps, opt.timestep, opt.integrator == mujoco.mjtIntegrator.mjINT_EULER, problems,
                               advice)
    _standing_findings(robot, stand, steps, unstable, problems, advice)
    if own.diverged > 0.0:
        problems.append(f"{100 * own.diverged:.0f}% of the rollouts with random actions and pushes diverge with the "
                        f"task's solver settings ({opt.iterations} / {opt.ls_iterations} iterations, {cone}): raise "
                        f"the iterations (SimOverrides or env.solver_iterations / env.ls_iterations), lower the "
                        f"timestep ({opt.timestep:g} s), add armature, lower kp / kd")
    trials = [solver_trial(robot, it, ls, c, RANDOM_ROLLOUTS, spread=spread) for it, ls, c in SOLVER_GRID
              ] if solver else []
    solver_advice = _cheapest(trials, problems) if solver else ""
    return {
        "task": task.name, "robot": robot.spec.name, "verdict": "FAIL" if problems else "WARN" if advice else "OK",
        "problems": problems, "advice": advice, "solver_advice": solver_advice,
        "solver": {"timestep": opt.timestep, "iterations": opt.iterations, "ls_iterations": opt.ls_iterations,
                   "cone": cone, "random_actions": dataclasses.asdict(own), "reset_spread": dataclasses.asdict(spread)},
        "standing": dataclasses.asdict(stand), "step_response": [dataclasses.asdict(s) for s in steps],
        "solver_trials": [dataclasses.asdict(t) for t in trials], "seconds": round(time.perf_counter() - t0, 1),
    }


def _servo_findings(steps: list[StepResponse], timestep: float, euler: bool, problems: list[str],
                    advice: list[str]) -> list[StepResponse]:
    """Problems / advice from the step responses; returns the unstable groups."""
    unstable = [s for s in steps
                if s.overshoot > UNSTABLE or s.steady_state_error > UNSTABLE or s.final_speed > STILL_MOVING]
    for s in steps:
        if s in unstable:
            fix = ("SimOverrides(integrator='implicitfast') (MuJoCo's default Euler applies kd explicitly), "
                   if euler else "")
            problems.append(f"{s.group}: the servo is unstable (step response overshoot {100 * s.overshoot:.0f}%, "
                            f"{100 * s.steady_state_error:.0f}% of the step off after 0.5 s, still moving at "
                            f"{s.final_speed:.1f} rad/s): {fix}lower kd (now {s.kd:g}) or kp (now {s.kp:g}), add "
                            f"armature, or lower the timestep ({timestep:g} s)")
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
    return unstable


def _standing_findings(robot: ResolvedRobot, stand: Standing, steps: list[StepResponse],
                       unstable: list[StepResponse], problems: list[str], advice: list[str]) -> None:
    """Problems / advice from standing still: divergence, a fall, a sag, contacts, limits, saturation."""
    opt, target = robot.model.opt, robot.spec.base_height
    if stand.diverged_at is not None:
        problems.append(f"the simulation diverges at {stand.diverged_at:.2f} s standing still: " + (
            "fix the unstable servos first" if unstable else f"raise the solver iterations (now {opt.iterations} / "
            f"{opt.ls_iterations}), lower the timestep ({opt.timestep:g} s), add armature or lower kd"))
        return
    gains = ", ".join(f"{s.group}: kp {s.kp:g} / kd {s.kd:g}" for s in steps)
    fix = "fix the unstable servos first" if unstable else f"raise kp ({gains}) or lower base_height"
    ratio = stand.base_height / target
    fired = [b for b, share in stand.contacts.items() if share > CONTACT_SHARE]
    fired_text = "; " + ", ".join(fired) + " contacts fire" if fired else ""
    if stand.tilt > FALL_TILT:
        problems.append(f"falls over standing still (tilt {math.degrees(stand.tilt):.0f} deg, base at "
                        f"{stand.base_height:.2f} m){fired_text}: raise kp / kd ({gains}), check default_pose (is "
                        f"it balanced over the feet?)")
    elif ratio < SAG:
        problems.append(f"base settles at {stand.base_height:.2f} m of {target:.2f} m ({100 * ratio:.0f}%)"
                        f"{fired_text}: {fix}")
    elif fired:
        problems.append(f"{', '.join(fired)} contacts fire standing still (base at {stand.base_height:.2f} m of "
                        f"{target:.2f} m): check default_pose and foot_geoms / foot_bodies")
    elif ratio > 1.02:
        advice.append(f"base settles at {stand.base_height:.2f} m, above base_height {target:.2f} m: the reset "
                      f"puts the feet into the floor; raise base_height")
    pinned = [j for j, share in stand.at_limit.items() if share > LIMIT_SHARE]
    if pinned:
        advice.append(f"joints at their limit standing still: {', '.join(pinned)}: check default_pose against the "
                      f"joint ranges")
    saturated = [j for j, share in stand.saturation.items() if share > SATURATION_SHARE]
    if saturated and not unstable:
        problems.append(f"servos at their effort limit standing still: {', '.join(saturated)}: raise effort_limit "
                        f"or lower the robot's load (base_height, default_pose)")


def _cheapest(trials: list[SolverTrial], problems: list[str]) -> str:
    """The cheapest setting without divergence, as a line (a problem when every setting diverges)."""
    stable = [t for t in trials if t.diverged == 0.0]
    if not stable:
        problems.append("every solver setting tried diverges under random actions and pushes: lower the timestep, "
                        "add armature, lower kp / kd")
        return ""
    fastest = max(t.steps_per_s for t in stable)
    best = next(t for t in stable if t.steps_per_s >= (1.0 - SPEED_TIE) * fastest)  # the grid is cheapest first
    return (f"cheapest stable solver: SimOverrides(iterations={best.iterations}, ls_iterations={best.ls_iterations}, "
            f"cone={best.cone!r}) at {best.steps_per_s} physics steps/s (one thread, CPU time)")


def render(report: dict[str, Any]) -> str:
    """The report as a few lines for the console."""
    s = report["standing"]
    lines = [f"robot check of {report['task']} ({report['robot']}): {report['verdict']}"]
    div = "" if s["diverged_at"] is None else f", DIVERGED at {s['diverged_at']:.2f} s"
    lines.append(f"  standing {s['seconds']:g} s: base {s['base_height']:.3f} m, tilt "
                 f"{math.degrees(s['tilt']) if s['tilt'] == s['tilt'] else float('nan'):.1f} deg, non-foot contacts "
                 f"{', '.join(f'{b} {100 * v:.0f}%' for b, v in s['contacts'].items()) or 'none'}{div}")
    sv = report["solver"]
    lines.append(f"  random actions with pushes from the task's resets, the task's solver ({sv['iterations']} / "
                 f"{sv['ls_iterations']} "
                 f"iterations, {sv['cone']}, timestep {sv['timestep']:g} s): diverged "
                 f"{100 * sv['random_actions']['diverged']:.0f}% of {RANDOM_ROLLOUTS} rollouts")
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
