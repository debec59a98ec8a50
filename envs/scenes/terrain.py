"""The generated-terrain scene: the flat scene's light and sky, with a MuJoCo heightfield as the floor.

The heightfield geom is named like the plane it replaces (``FLOOR``), so the task's contact sensors (collision
geom vs floor) work unchanged. MuJoCo stores the heights normalized to [0, 1] times the elevation range, the
geom sitting at the lowest height; its surface interpolates linearly between samples (two triangles per cell).
"""

from __future__ import annotations

import mujoco
import numpy as np

from envs.scenes.flat import FLOOR, flat_scene
from envs.terrain.generator import Terrain

BASE_DEPTH = 1.0
"""Thickness of the heightfield's solid below its lowest point (m)."""


def terrain_scene(terrain: Terrain) -> mujoco.MjSpec:
    """A fresh MjSpec of the world with ``terrain`` as its floor (see the module docstring)."""
    spec = flat_scene()
    floor = spec.geom(FLOOR)
    heights = terrain.heights
    low, high = float(heights.min()), float(heights.max())
    span = max(high - low, 1e-3)
    nx, ny = heights.shape
    hs = terrain.horizontal_scale
    half_x, half_y = (nx - 1) * hs / 2, (ny - 1) * hs / 2
    # MuJoCo's rows run along y and its columns along x: the transpose of our [x, y] map.
    data = ((heights.T - low) / span).astype(np.float32)
    spec.add_hfield(name="terrain", size=[half_x, half_y, span, BASE_DEPTH], nrow=ny, ncol=nx,
                    userdata=data.ravel().tolist())
    floor.type = mujoco.mjtGeom.mjGEOM_HFIELD
    floor.hfieldname = "terrain"
    floor.pos = [half_x - terrain.border, half_y - terrain.border, low]
    return spec
