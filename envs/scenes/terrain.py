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


def terrain_scene(terrain: Terrain, window: tuple[float, float, float] | None = None) -> mujoco.MjSpec:
    """A fresh MjSpec of the world with ``terrain`` as its floor (see the module docstring); ``window`` (x, y,
    half): only the part within ``half`` metres of (x, y) per axis, at the same world coordinates (a lighter floor
    to render: a software renderer takes seconds per frame for the full grid)."""
    spec = flat_scene()
    floor = spec.geom(FLOOR)
    hs = terrain.horizontal_scale
    heights, x0, y0 = terrain.heights, -terrain.border, -terrain.border
    if window is not None:
        x, y, half = window
        a0, a1 = _span(x - half - x0, x + half - x0, hs, heights.shape[0])
        b0, b1 = _span(y - half - y0, y + half - y0, hs, heights.shape[1])
        heights, x0, y0 = heights[a0:a1 + 1, b0:b1 + 1], x0 + a0 * hs, y0 + b0 * hs
    low, high = float(heights.min()), float(heights.max())
    span = max(high - low, 1e-3)
    nx, ny = heights.shape
    half_x, half_y = (nx - 1) * hs / 2, (ny - 1) * hs / 2
    # MuJoCo's rows run along y and its columns along x: the transpose of our [x, y] map.
    data = ((heights.T - low) / span).astype(np.float32)
    spec.add_hfield(name="terrain", size=[half_x, half_y, span, BASE_DEPTH], nrow=ny, ncol=nx,
                    userdata=data.ravel().tolist())
    floor.type = mujoco.mjtGeom.mjGEOM_HFIELD
    floor.hfieldname = "terrain"
    floor.pos = [x0 + half_x, y0 + half_y, low]
    return spec


def _span(low: float, high: float, spacing: float, n: int) -> tuple[int, int]:
    """First and last sample index (at least two samples) covering [low, high] (m from sample 0)."""
    first = min(max(int(np.floor(low / spacing)), 0), n - 2)
    return first, min(max(int(np.ceil(high / spacing)), first + 1), n - 1)
