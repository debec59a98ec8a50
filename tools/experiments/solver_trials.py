"""The robot check's random-action trial of a task's robot under solver settings given on the command line.

Each SETTING is ``ITERATIONS/LS_ITERATIONS/SOLVER`` (SOLVER: newton, cg or pgs) at the robot's own cone and
impratio (the task's, after ``--fix``); it prints the rollouts that diverged and the physics steps/s (CPU time of
``mujoco.rollout``'s threads), the numbers ``check_robot --fix``'s solver search judges (``fix_solver.py``).
docs/robots.md quotes it:

    MENAGERIE_ROOT=/tmp/menagerie python -m tools.experiments.solver_trials menagerie:unitree_go2 4/6/newton \\
        20/20/newton 16/16/cg --rollouts 1024
"""

from __future__ import annotations

import argparse
import dataclasses

from envs.robot_check.rollouts import ROLLOUTS, SOLVER_NAMES, solver_name, solver_trial, with_solver


def _setting(text: str) -> tuple[int, int, str]:
    try:
        it, ls, solver = text.split("/")
        if solver not in SOLVER_NAMES.values():
            raise ValueError
        return int(it), int(ls), solver
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: ITERATIONS/LS_ITERATIONS/SOLVER, SOLVER one of "
                                         f"{', '.join(SOLVER_NAMES.values())} (e.g. 16/16/cg)") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", help="a locomotion task with a RobotSpec (menagerie:NAME, path/to/robot.py:flat)")
    parser.add_argument("settings", nargs="+", type=_setting, help="ITERATIONS/LS_ITERATIONS/SOLVER")
    parser.add_argument("--rollouts", type=int, default=128, help=f"random rollouts of 2 s (--fix: 128, then "
                                                                  f"{ROLLOUTS})")
    args = parser.parse_args(argv)
    from configs.catalog import get_task
    from envs.robot_check.advice import model_contact
    from envs.robot_check.trials import quiet_mujoco_warnings
    from envs.robot_check.verdict import env_config, robot_of, spread_of

    task = get_task(args.task)
    robot = robot_of(task)
    spread = spread_of(env_config(task))
    contact = model_contact(robot.model)
    print(f"{args.task}: {contact.text()}, timestep {robot.model.opt.timestep:g} s; the task's solver "
          f"{robot.model.opt.iterations} / {robot.model.opt.ls_iterations} {solver_name(robot.model)}")
    for it, ls, solver in args.settings:
        trial_robot = dataclasses.replace(robot, model=with_solver(robot.model, it, ls, contact.cone, solver=solver))
        with quiet_mujoco_warnings():
            t = solver_trial(trial_robot, it, ls, contact.cone, args.rollouts, spread=spread)
        print(f"  {it} / {ls} {solver}: diverged {round(t.diverged * t.rollouts)} of {t.rollouts}, "
              f"{t.steps_per_s:,.0f} physics steps/s")


if __name__ == "__main__":
    main()
