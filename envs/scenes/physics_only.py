"""The scene an exported policy carries (``scene_mjb``): compiled without what only drawing uses.

MuJoCo's ``discardvisual`` compiler flag leaves out every geom with ``contype = conaffinity = 0`` that nothing else
names (a sensor, a contact pair or exclusion keeps it), the meshes only such geoms used, and every texture and
material; where a discarded geom carried mass its body gets an explicit inertial of the same value. The physics
is unchanged, with two length scales the compiler derives from every geom's extent: ``dof_length`` (read by
MuJoCo's sleeping, off unless a robot file enables it) and ``stat`` (drawing only). Both are copied here from the
full compile, so plain MuJoCo steps the small scene bit for bit as the full one (tests/deploy/test_export_scene.py).
Videos and the viewer never read this scene: they draw the training env's own model, visuals included.
"""

from __future__ import annotations

import mujoco
import numpy as np

INERTIA = ("body_mass", "body_inertia", "body_ipos", "body_iquat", "body_subtreemass")
"""The fields that must come out equal when the visual geoms are gone."""
STAT = ("extent", "meansize", "center", "meanmass", "meaninertia")
"""``mjStatistic`` fields copied from the full compile."""


def physics_only(spec: mujoco.MjSpec, full: mujoco.MjModel) -> mujoco.MjModel:
    """``spec`` (of which ``full`` is the compiled model) compiled with ``discardvisual``; ``full`` itself when that
    would change a body's inertia (MuJoCo promises it does not; then the file is bigger, never different)."""
    before = spec.compiler.discardvisual
    spec.compiler.discardvisual = True
    try:
        small = spec.compile()
    finally:
        spec.compiler.discardvisual = before
    same = (small.nbody == full.nbody and small.nv == full.nv
            and all(np.array_equal(getattr(small, f), getattr(full, f)) for f in INERTIA))
    if not same:
        return full
    small.dof_length[:] = full.dof_length
    for name in STAT:
        setattr(small.stat, name, getattr(full.stat, name))
    return small
