"""Draft a robot file (a RobotSpec and its tasks) from a robot's MJCF file, each value commented with where it came
from: the feet, the trained / held / welded joints, the mirror pairs, the standing pose, the gains, limits and
armature (``envs/robots/draft.py``).

    python -m tools.new_robot path/to/robot.xml --out my_robot.py
    python -m tools.new_robot menagerie:unitree_go2 --out go2.py        # a MuJoCo Menagerie robot by name
    python -m tools.new_robot menagerie:unitree_g1@g1_mjlab              # another entry point; prints the file

Then ``python -m tools.check_robot my_robot.py:flat --fix --write`` and ``python train.py --task my_robot.py:flat``.
Exit status 2 with one line for bad input (a file that does not compile, no free joint, no feet, an unknown
Menagerie name, ...).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from contract.errors import OneLineParser, run_reporting_errors

    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("source", help="an MJCF file, or menagerie:NAME[@ENTRY]")
    p.add_argument("--out", type=Path, help="write the robot file here (default: print it)")
    p.add_argument("--name", help="the spec's name (default: the file's stem or the Menagerie name)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    args = p.parse_args(argv)
    return run_reporting_errors(lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
    from contract.errors import UserError
    from envs.robots.draft import draft
    from envs.robots.draft_source import mjcf_source, source
    from envs.robots.menagerie import fast_contact, is_menagerie, parse, xml_path
    from envs.robots.spec_source import write_atomic

    menagerie = None
    if is_menagerie(args.source):
        ref = parse(args.source)
        path, menagerie = xml_path(ref), (ref.name, ref.entry)
        name = args.name or ref.robot_id.replace("@", "_")
    else:
        path = Path(args.source)
        if not path.is_file():
            raise UserError(f"new robot: {path} does not exist")
        name = args.name or path.stem
    if args.out is not None and args.out.exists() and not args.force:
        raise UserError(f"new robot: {args.out} exists; --force overwrites it")
    d = draft(path, name)
    if menagerie and ref.fast:
        d = dataclasses.replace(d, spec=fast_contact(d.spec))
    mjcf = mjcf_source(path, args.out, (menagerie[0], menagerie[1] or "") if menagerie else None)
    if menagerie and not menagerie[1]:
        mjcf = mjcf.replace(', ""', "")
    text = source(d, args.source, mjcf)
    guessed = f"; GUESSED: {'; '.join(d.guesses)}" if d.guesses else "; nothing guessed"
    if args.out is None:
        print(text, end="")
        print(f"drafted: {d.kind}, {len(d.spec.joints)} trained{guessed}", file=sys.stderr)
        return 0
    write_atomic(args.out, text)
    print(f"wrote {args.out}: {d.kind}, {len(d.spec.joints)} trained, "
          f"{sum(1 for _ in d.spec.held)} held groups, {len(d.mirror_pairs)} mirror pairs{guessed}; next: "
          f"python -m tools.check_robot {args.out}:flat --fix{' --fast' if menagerie and ref.fast else ''} --write")
    return 0


if __name__ == "__main__":
    sys.exit(main())
