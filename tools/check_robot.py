"""The robot check: does the robot stand, and do its servos track, before any training? Under a minute on 2 CPU cores.

    python -m tools.check_robot path/to/my_robot.py:flat          # a robot file's task
    python -m tools.check_robot --task quadruped-flat             # a registered task
    python -m tools.check_robot examples/my_robot/my_robot.py:flat --solver --json check.json

On native MuJoCo, in the task's own scene (``apps/robot_check/``):
1. standing: zero actions (servo targets at the default pose) for 4 s after the reset's drop from ``base_height``:
   the base height it settles at, its tilt, which non-foot bodies touch the floor, divergence, joints at their
   limits, servos at their effort limit;
2. a PD step response per actuator group (base held in the air, one unit of action): rise time, overshoot,
   steady-state error;
3. with ``--solver``: random actions with pushes under cheaper solver settings (iterations, line-search
   iterations, cone), with the share of diverged rollouts and the physics steps/s of each (per second of CPU
   time on one thread, the fastest of 3 runs); the cheapest setting without divergence is named (information:
   not part of the verdict).

The verdict is ``OK``, ``WARN`` (trains, but look at the advice) or ``FAIL`` (fix before training), each problem
with its numbers and what to change. Exit status 0 for OK / WARN, 1 for FAIL, 2 for bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from configs.catalog import get_task
    from apps.robot_check.verdict import check, render
    from contract.errors import OneLineParser, run_reporting_errors

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
        report = check(get_task(args.ref or args.task), args.solver, args.seconds)
        print(render(report))
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=1))
        return 1 if report["verdict"] == "FAIL" else 0

    return run_reporting_errors(run, args.debug)


if __name__ == "__main__":
    sys.exit(main())
