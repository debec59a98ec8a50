"""The robot check: does the robot stand, and do its servos track, before any training? Under a minute on 2 CPU cores.

    python -m tools.check_robot path/to/my_robot.py:flat          # a robot file's task
    python -m tools.check_robot --task quadruped-flat             # a registered task
    python -m tools.check_robot examples/my_robot/my_robot.py:flat --solver --json check.json

On native MuJoCo, in the task's own scene (``tools/robot_trials.py``):
1. standing: zero actions (servo targets at the default pose) for 4 s after the reset's drop from ``base_height``:
   the base height it settles at, its tilt, which non-foot bodies touch the floor, divergence, joints at their
   limits, servos at their effort limit;
2. a PD step response per actuator group (base held in the air, one unit of action): rise time, overshoot,
   steady-state error;
3. with ``--solver``: random actions with pushes under cheaper solver settings (iterations, line-search
   iterations, cone), with the share of diverged rollouts and the physics steps/s of each (per second of CPU
   time on one thread, the fastest of 3 runs); the cheapest setting without divergence is named (information: not part of the verdict).

The verdict is ``OK``, ``WARN`` (trains, but look at the advice) or ``FAIL`` (fix before training), each problem
with its numbers and what to change. Exit status 0 for OK / WARN, 1 for FAIL, 2 for bad input.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

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


def _robot(task: str) -> Any:
    """The task's resolved robot (``ResolvedRobot``) and its env config, built as training builds it."""
    import torch

    from configs.catalog import get_task
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion_config import LocomotionEnvConfig
    from rl_core.errors import UserError

    spec = get_task(task)
    cfg = spec.default_config().env
    if not isinstance(cfg, LocomotionEnvConfig):
        raise UserError(f"--task {task}: not a locomotion task (the robot check needs a RobotSpec)")
    if spec.validate is not None:
        spec.validate(cfg)
    env = spec.make_env(dataclasses.replace(cfg, num_envs=1, backend="native", physics_threads=1), torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env.robot, cfg


def check(task: str, solver: bool = False, seconds: float = 4.0) -> dict[str, Any]:
    """Run the check; the report as a JSON-ready dict (``verdict``, ``problems``, ``advice`` and the numbers)."""
    from tools.robot_trials import solver_trial, standing, step_response

    t0 = time.perf_counter()
    robot, cfg = _robot(task)
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
        "task": task, "robot": spec.name, "verdict": verdict, "problems": problems, "advice": advice,
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


def main(argv: list[str] | None = None) -> int:
    from rl_core.errors import OneLineParser, run_reporting_errors

    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("ref", nargs="?", help="path/to/robot.py:flat (a robot file's task)")
    p.add_argument("--task", help="a registered locomotion task, e.g. quadruped-flat")
    p.add_argument("--solver", action="store_true", help="also try cheaper solver settings (about 20 s more)")
    p.add_argument("--seconds", type=float, default=4.0, help="standing time (s)")
    p.add_argument("--json", type=Path, help="write the report here")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    args = p.parse_args(argv)
    if bool(args.ref) == bool(args.task):
        p.error("give a robot file's task (path/to/robot.py:flat) or --task NAME, one of them")

    def run() -> int:
        report = check(args.ref or args.task, args.solver, args.seconds)
        print(render(report))
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=1))
        return 1 if report["verdict"] == "FAIL" else 0

    return run_reporting_errors(run, args.debug)


if __name__ == "__main__":
    sys.exit(main())
