"""A mesh-heavy variant of ``examples/my_robot`` for the export-size tests and numbers (no third-party file: the
meshes are generated ellipsoids):

    python -m tests.mesh_heavy_robot /tmp/heavy      # writes /tmp/heavy/my_robot/my_robot.py (task :flat)

A dense visual mesh on the trunk and on every thigh, a checker texture on their material, and the base's inertia
from its geoms (its inertial removed; the trunk's visual mesh carries mass), so an export without what only
drawing uses shows its reduction and MuJoCo's explicit inertial for a discarded mass-bearing geom is exercised.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RINGS, SEGMENTS = 60, 120
"""The visual mesh: a UV ellipsoid of RINGS x SEGMENTS vertices (7 200 vertices, about 14 000 faces)."""


def ellipsoid_obj(rx: float, ry: float, rz: float) -> str:
    """A closed UV ellipsoid as Wavefront OBJ text."""
    lines = []
    for i in range(RINGS):
        theta = np.pi * (i + 0.5) / RINGS
        for j in range(SEGMENTS):
            phi = 2 * np.pi * j / SEGMENTS
            lines.append(f"v {rx * np.sin(theta) * np.cos(phi):.6f} {ry * np.sin(theta) * np.sin(phi):.6f} "
                         f"{rz * np.cos(theta):.6f}")
    for i in range(RINGS - 1):
        for j in range(SEGMENTS):
            a, b = i * SEGMENTS + j + 1, i * SEGMENTS + (j + 1) % SEGMENTS + 1
            c, d = a + SEGMENTS, b + SEGMENTS
            lines += [f"f {a} {b} {d}", f"f {a} {d} {c}"]
    return "\n".join(lines) + "\n"


def mesh_heavy_robot(folder: Path) -> Path:
    """A copy of examples/my_robot in ``folder`` (module docstring); returns its robot file."""
    robot = folder / "my_robot"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "examples" / "my_robot", robot)
    (robot / "assets" / "trunk.obj").write_text(ellipsoid_obj(0.19, 0.07, 0.06))
    xml = (robot / "my_robot.xml").read_text()
    xml = xml.replace('<geom type="mesh" contype="0" conaffinity="0" group="2" rgba="0.85 0.55 0.2 1"/>',
                      '<geom type="mesh" contype="0" conaffinity="0" group="2" material="skin" density="300"/>')
    xml = xml.replace('<mesh name="trunk" file="trunk.obj"/>',
                      '<mesh name="trunk" file="trunk.obj"/><mesh name="limb" file="trunk.obj" scale="0.3 0.3 0.6"/>'
                      '<texture name="skin" type="2d" builtin="checker" width="512" height="512" rgb1="0.8 0.5 0.2" '
                      'rgb2="0.3 0.3 0.3"/><material name="skin" texture="skin"/>')
    xml = xml.replace('<inertial pos="0 0 0" mass="5.5" diaginertia="0.02 0.06 0.07"/>', "", 1)
    for leg in ("FL", "FR", "RL", "RR"):  # a mesh visual on every thigh: more visual-only mesh geoms
        xml = xml.replace(f'<joint name="{leg}_thigh_joint" class="hip"/>',
                          f'<joint name="{leg}_thigh_joint" class="hip"/><geom class="visual" mesh="limb" '
                          f'density="0"/>')
    assert xml.count('mesh="limb"') == 4 and "mass=\"5.5\"" not in xml
    (robot / "my_robot.xml").write_text(xml)
    return robot / "my_robot.py"


if __name__ == "__main__":
    print(mesh_heavy_robot(Path(sys.argv[1])))
