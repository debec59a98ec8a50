"""A drafted Menagerie robot file with its legs on mjlab's gain rule (issue 46's G1-style experiment, docs/robots.md).

    python -m tests.menagerie_models /tmp/men && export MENAGERIE_ROOT=/tmp/men
    python -m tools.experiments.mjlab_gains menagerie:unitree_g1@g1_mjlab /tmp/g1m.py --iterations 4 --ls-iterations 6
    python train.py --task /tmp/g1m.py:flat

Drafts the robot (``python -m tools.new_robot NAME --out FILE``), then gives each trained (leg) actuator group mjlab's
values from the file's armature J: kp = J (2 pi 10 Hz)^2, kd = 2 x 2.0 x J x 2 pi 10 Hz, and ``action_scale="effort"``
(0.25 x effort limit / kp per joint); held groups keep the draft's. ``--iterations`` / ``--ls-iterations`` set the
solver as the by-name ``--fix`` chose it (the draft keeps the file's), so that the gains are the one difference.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

import mujoco

NATURAL_HZ, DAMPING_RATIO = 10.0, 2.0


def mjlab_gains(armature: float) -> tuple[float, float]:
    """(kp, kd) of mjlab's rule for a joint of reflected inertia ``armature`` (kg m^2)."""
    w = 2 * math.pi * NATURAL_HZ
    return armature * w * w, 2 * DAMPING_RATIO * armature * w


def rewrite(text: str, model: mujoco.MjModel, iterations: int | None, ls_iterations: int | None) -> str:
    """The drafted file's text with each non-held actuator group on mjlab's rule."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        g = re.search(r'ActuatorGroup\(joints="([^"]+)", kp=[\d.]+, kd=[\d.]+, effort_limit=([\d.]+)\)', line)
        above = i
        while above > 0 and lines[above - 1].strip().startswith("#"):
            above -= 1
        if not g or "# held" in "\n".join(lines[above:i]):
            continue
        pattern = re.compile(g.group(1))
        joints = [j for j in range(model.njnt) if pattern.fullmatch(model.joint(j).name)]
        armature = {round(float(model.dof_armature[model.jnt_dofadr[j]]), 9) for j in joints}
        if len(armature) != 1 or not min(armature):
            raise SystemExit(f"group {g.group(1)}: one nonzero armature needed, found {sorted(armature)}")
        kp, kd = mjlab_gains(armature.pop())
        lines[i] = line.replace(g.group(0), f'ActuatorGroup(joints="{g.group(1)}", kp={kp:.4g}, kd={kd:.4g}, '
                                             f'effort_limit={g.group(2)}, action_scale="effort")')
    out = "\n".join(lines)
    solver = "".join(f", {k}={v}" for k, v in (("iterations", iterations), ("ls_iterations", ls_iterations)) if v)
    return re.sub(r"sim=SimOverrides\(([^)]*)\)", lambda m: f"sim=SimOverrides({m.group(1)}{solver})", out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.experiments.mjlab_gains", description=__doc__.split("\n\n")[0])
    p.add_argument("robot", help="a Menagerie robot as tools.new_robot takes it, e.g. menagerie:unitree_g1@g1_mjlab")
    p.add_argument("out", type=Path, help="the robot file to write")
    p.add_argument("--iterations", type=int)
    p.add_argument("--ls-iterations", type=int)
    args = p.parse_args(argv)
    subprocess.run([sys.executable, "-m", "tools.new_robot", args.robot, "--out", str(args.out), "--force"],
                   check=True)
    from envs.robots.menagerie import parse, xml_path

    model = mujoco.MjModel.from_xml_path(str(xml_path(parse(args.robot))))
    args.out.write_text(rewrite(args.out.read_text(), model, args.iterations, args.ls_iterations))
    print(f"wrote {args.out}: trained groups on mjlab's rule ({NATURAL_HZ:g} Hz, damping ratio {DAMPING_RATIO:g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
