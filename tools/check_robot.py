"""The robot check: does the robot stand, and do its servos track, before any training? About 20 s on 2 CPU cores.

    python -m tools.check_robot path/to/my_robot.py:flat          # a robot file's task
    python -m tools.check_robot --task quadruped-flat             # a registered task
    python -m tools.check_robot examples/my_robot/my_robot.py:flat --solver --json check.json
    python -m tools.check_robot path/to/my_robot.py:flat --fix [--write]   # settings that pass, as a diff
    python -m tools.check_robot menagerie:unitree_g1@g1_mjlab:track   # a tracking task's robot (every joint trained)

On native MuJoCo, in the task's own scene (``envs/robot_check/``):
1. standing: zero actions (servo targets at the default pose) for 4 s after the reset's drop from ``base_height``:
   the base height it settles at, its tilt, which non-foot bodies touch the floor, how far the feet slide, how far
   the sideways joints (hip abduction / roll) splay from their pose, the joints furthest from their pose,
   divergence, joints at their limits, servos at their effort limit; a biped
   that does not stand on its own is judged with its base supported (the verdict says so);
2. random actions with pushes from the task's resets: 1024 rollouts of 2 s, the divergence rate per step;
3. a PD step response per actuator group, held groups included (base held in the air, one unit of action within
   the joint's range): rise time, overshoot, steady-state error, damping ratio;
4. with ``--solver``: cheaper solver settings (iterations, line-search iterations, cone), each judged by standing
   and random actions, with the physics steps/s of each (per second of CPU time); the cheapest that passes is
   named (information: not part of the verdict).

The verdict is ``OK``, ``WARN`` (trains, but look at the advice) or ``FAIL`` (fix before training), each problem
with its numbers and what to change. Exit status 0 for OK / WARN, 1 for FAIL, 2 for bad input.

``--fix`` searches settings that pass the whole check (``envs/robot_check/fix.py``: gains per actuator group, held
groups included, within the makers' band of each motor (``envs/robot_check/band.py``); solver iterations at the
file's contact model, cheapest first) and prints them as a diff of the robot file; ``--write`` writes it, keeping
the comments above each actuator group and adding what it changed.

A tracking task (``:track``, ``--task humanoid-track``) is checked on the robot that task trains: every joint
trained, held ones at their held pose, welded ones its clips move released, its solver, its start noise
(``verdict.tracking_note``); ``--fix`` on it is one line naming the locomotion task to fix instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envs.registry import TaskSpec


def main(argv: list[str] | None = None) -> int:
    from configs.catalog import get_task
    from contract.errors import OneLineParser, run_reporting_errors
    from envs.robot_check.verdict import check, render

    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("ref", nargs="?", help="path/to/robot.py:flat or :track (a robot file's task), menagerie:NAME")
    p.add_argument("--task", help="a registered locomotion or tracking task, e.g. quadruped-flat, humanoid-track")
    p.add_argument("--solver", action="store_true", help="also try cheaper solver settings (about 20 s more)")
    p.add_argument("--seconds", type=float, default=4.0, help="standing time (s)")
    p.add_argument("--rollouts", type=int, default=1024,
                   help="random-action rollouts of 2 s (1024: a divergence rate of 1e-5 per step shows)")
    p.add_argument("--fix", action="store_true", help="search settings that pass the check; print the diff")
    p.add_argument("--write", action="store_true", help="with --fix: write the diff into the robot file")
    p.add_argument("--fast", action="store_true", help="with --fix: the spec runs menagerie:NAME+fast's contact model "
                   "(a file from tools.new_robot menagerie:NAME+fast): keep it, solver from 20 / 20 (implied by a "
                   "menagerie:NAME+fast task)")
    p.add_argument("--json", type=Path, help="write the report here")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    args = p.parse_args(argv)
    if bool(args.ref) == bool(args.task):
        p.error("give a robot file's task (path/to/robot.py:flat) or --task NAME, one of them")

    if (args.write or args.fast) and not args.fix:
        p.error("--write and --fast need --fix")

    def run() -> int:
        if args.fix:
            report = _fix(get_task(args.ref or args.task), args.seconds, args.write, args.rollouts, args.fast)
            if args.json is not None:
                args.json.write_text(json.dumps(report, indent=1))
            return 1 if report["verdict"] == "FAIL" else 0
        report = check(get_task(args.ref or args.task), args.solver, args.seconds, args.rollouts)
        print(render(report))
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=1))
        return 1 if report["verdict"] == "FAIL" else 0

    return run_reporting_errors(run, args.debug)


def _fix(task: TaskSpec, seconds: float, write: bool, rollouts: int, fast: bool = False) -> dict:
    """Search, print the check of what was found and the diff of the robot file (written with ``write``)."""
    from contract.errors import UserError
    from envs.robot_check.fix import fix
    from envs.robot_check.text import num
    from envs.robot_check.verdict import env_config, render, robot_of, spread_of, tracking_config
    from envs.robots.draft_edit import edited_keeping_comments
    from envs.robots.spec_source import changed_fields, diff, spec_location, value_source, write_atomic

    if tracking_config(task) is not None:
        flat = (f"{task.name[:-len(':track')]}:flat" if task.name.endswith(":track")
                else "--task NAME of the robot's locomotion task")
        raise UserError(f"--fix on a tracking task ({task.name}): the gains and solver it runs are the robot file's; "
                        f"search them on the locomotion task: python -m tools.check_robot {flat} --fix [--write], "
                        f"then check {task.name} again")
    from envs.robots.menagerie import is_menagerie, parse

    cfg = env_config(task)
    spec = robot_of(task).spec
    fast = fast or (is_menagerie(task.name) and parse(task.name).fast)
    result = fix(spec, spread_of(cfg), cfg.collisions, seconds, rollouts, fast)
    report = dict(result.report, task=task.name, seconds=result.seconds, fix_changes=result.changes,
                  fix_log=result.log)
    print(render(report))
    for line in result.changes:
        print(f"  fix: {line}")
    print(f"  --fix searched {len(result.log)} candidates in {num(result.seconds)} s")
    fields = changed_fields(spec, result.spec)
    if not fields:
        print("--fix: nothing to change")
        return report
    where = spec_location(spec)
    if where is None:
        if write:
            raise UserError(f"--write: no robot file holds the spec of {task.name}; write one with "
                            f"python -m tools.new_robot ... --out my_robot.py")
        print("the settings found (no robot file holds this spec):")
        for name in fields:
            print(f"    {name}={value_source(getattr(result.spec, name), '    ')},")
        return report
    path, var = where
    before = path.read_text()
    after = edited_keeping_comments(before, var, spec, result.spec, result.changes)
    print(diff(path, before, after), end="")
    if write:
        write_atomic(path, after)
        print(f"written: {path}")
    return report


if __name__ == "__main__":
    sys.exit(main())
