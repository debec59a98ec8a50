"""Where one MuJoCo step of a task's robot spends its time, by MuJoCo's own timers, under solver settings given on
the command line.

Steps one world (single thread, ``mj_step``) through 8 rollouts of 2 s of the robot check's random actions with
pushes from the task's resets (``envs/robot_check/rollouts.py``) and prints microseconds per step in the whole step,
the collision (broad and narrow phase) and the constraint solve, with the solver's mean iterations, line-search
evaluations and constraint rows. Each SETTING is ``ITERATIONS/LS_ITERATIONS/CONE[/SOLVER]`` (default: the task's
own). docs/benchmarks.md quotes it:

    MENAGERIE_ROOT=/tmp/menagerie python -m tools.experiments.step_timers menagerie:unitree_go2 20/20/elliptic \\
        20/20/pyramidal
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import mujoco
import numpy as np

ROLLOUTS = 8
STEPS = 400
PARTS = (("step", "mjTIMER_STEP"), ("collision", "mjTIMER_POS_COLLISION"), ("constraint", "mjTIMER_CONSTRAINT"))


def _setting(text: str) -> tuple[int, int, str, str | None]:
    parts = text.split("/")
    try:
        if len(parts) not in (3, 4) or parts[2] not in ("pyramidal", "elliptic"):
            raise ValueError
        solver = parts[3] if len(parts) == 4 else None
        if solver not in (None, "newton", "cg", "pgs"):
            raise ValueError
        return int(parts[0]), int(parts[1]), parts[2], solver
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: ITERATIONS/LS_ITERATIONS/CONE[/SOLVER], CONE pyramidal or "
                                         "elliptic, SOLVER newton, cg or pgs (e.g. 20/20/elliptic)") from None


def timed(robot: Any, m: mujoco.MjModel, spread: Any) -> dict[str, float]:
    """Microseconds per step of each part of PARTS, and the solver's mean iterations, line-search evaluations and
    constraint rows per step, over ROLLOUTS x STEPS steps of random actions with pushes."""
    from envs.robot_check import rollouts as R
    from envs.robot_check.trials import Sim

    rng = np.random.default_rng(1)
    r = dataclasses.replace(robot, model=m)
    states, ctrl0 = R._start_states(r, m, ROLLOUTS, spread, rng)
    control = R._controls(r, m, Sim(r, m), ctrl0, ROLLOUTS, STEPS, 4, 1.0, rng)
    d = mujoco.MjData(m)
    niter, neval, nefc = [], [], []
    for k in range(ROLLOUTS):
        mujoco.mj_setState(m, d, states[k], mujoco.mjtState.mjSTATE_FULLPHYSICS)
        for s in range(STEPS):
            d.ctrl[:] = control[k, s, :m.nu]
            d.qfrc_applied[:] = control[k, s, m.nu:]
            mujoco.mj_step(m, d)
            n = int(d.solver_niter[0])
            niter.append(n)
            neval.append(sum(d.solver[i].neval for i in range(min(n, len(d.solver)))))
            nefc.append(d.nefc)
    steps = d.timer[mujoco.mjtTimer.mjTIMER_STEP].number
    out = {name: d.timer[getattr(mujoco.mjtTimer, t)].duration / steps * 1e6 for name, t in PARTS}
    return dict(out, iterations=float(np.mean(niter)), line_search=float(np.mean(neval)), rows=float(np.mean(nefc)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", help="a locomotion task with a RobotSpec (quadruped-flat, menagerie:NAME, ...)")
    parser.add_argument("settings", nargs="*", type=_setting, help="ITERATIONS/LS_ITERATIONS/CONE[/SOLVER]")
    parser.add_argument("--tolerance", type=float, default=None, help="opt.tolerance (default: the model's)")
    parser.add_argument("--ls-tolerance", type=float, default=None, help="opt.ls_tolerance (default: the model's)")
    args = parser.parse_args(argv)
    from configs.catalog import get_task
    from envs.robot_check.rollouts import solver_name, with_solver
    from envs.robot_check.trials import quiet_mujoco_warnings
    from envs.robot_check.verdict import env_config, robot_of, spread_of

    task = get_task(args.task)
    robot = robot_of(task)
    spread = spread_of(env_config(task))
    opt = robot.model.opt
    own = (opt.iterations, opt.ls_iterations, "elliptic" if opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
           else "pyramidal", solver_name(robot.model))
    print(f"{args.task}: {robot.model.ngeom} geoms, {robot.model.nv} dofs, timestep {opt.timestep:g} s, impratio "
          f"{opt.impratio:g}; the task's solver {own[0]} / {own[1]} {own[2]} {own[3]}; tolerance "
          f"{args.tolerance or opt.tolerance:g}, ls_tolerance {args.ls_tolerance or opt.ls_tolerance:g}; us per step "
          "(1 thread)")
    for it, ls, cone, solver in args.settings or [own]:
        m = with_solver(robot.model, it, ls, cone, solver=solver)
        if args.tolerance is not None:
            m.opt.tolerance = args.tolerance
        if args.ls_tolerance is not None:
            m.opt.ls_tolerance = args.ls_tolerance
        with quiet_mujoco_warnings():
            t = timed(robot, m, spread)
        print(f"  {it} / {ls} {cone} {solver or solver_name(m)}: step {t['step']:.1f}, collision "
              f"{t['collision']:.1f}, constraint {t['constraint']:.1f}; solver iterations {t['iterations']:.2f}, "
              f"line-search evaluations {t['line_search']:.1f}, constraint rows {t['rows']:.1f}")


if __name__ == "__main__":
    main()
