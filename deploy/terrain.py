"""The ground of an exported policy's scene, in numpy: heights, the height scan and the tiles (no torch, no envs).

The heights are read back from the scene's heightfield (``scene_mjb``): MuJoCo stores them normalized to [0, 1]
(``hfield_data``, ``nrow`` rows along y by ``ncol`` columns along x), scaled by ``hfield_size[2]``, with the
geom at the lowest height (``envs/scenes/terrain.py``). The lookup is the training env's (``envs/terrain/
ground.py``): bilinear in the height map, clamped to its edges. A scene without a heightfield is a plane at 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from contract.errors import UserError

OUTSIDE_MARGIN = 1.0
"""An episode whose base gets within this distance (m) of the height map's edge ends as a time-out (training's)."""


class HeightMap:
    """Ground heights of a compiled scene: its one heightfield geom (None: a plane at height 0)."""

    def __init__(self, model: mujoco.MjModel):
        geoms = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD]
        self.heights: np.ndarray | None = None
        """Heights ``[nx, ny]`` (m): sample ``[a, b]`` lies at ``(x0 + a dx, y0 + b dy)``."""
        if not geoms:
            return
        if len(geoms) > 1:
            raise UserError(f"sim2sim: the stored scene has {len(geoms)} heightfield geoms; expected one floor")
        g = geoms[0]
        if model.geom_bodyid[g] != 0 or not np.allclose(model.geom_quat[g], [1.0, 0.0, 0.0, 0.0]):
            raise UserError("sim2sim: the stored scene's heightfield is not an unrotated geom of the world body")
        h = int(model.geom_dataid[g])
        nrow, ncol = int(model.hfield_nrow[h]), int(model.hfield_ncol[h])
        adr = int(model.hfield_adr[h])
        size = model.hfield_size[h]
        pos = model.geom_pos[g]
        data = np.asarray(model.hfield_data[adr:adr + nrow * ncol], dtype=np.float64).reshape(nrow, ncol)
        self.heights = data.T * size[2] + pos[2]  # MuJoCo's rows run along y: transpose to [x, y]
        self.x0, self.y0 = pos[0] - size[0], pos[1] - size[1]
        self.dx, self.dy = 2 * size[0] / (ncol - 1), 2 * size[1] / (nrow - 1)

    def height(self, xy: np.ndarray) -> np.ndarray:
        """Ground height ``[...]`` at world points ``xy [..., 2]`` (bilinear; 0 on a plane)."""
        xy = np.asarray(xy, dtype=np.float64)
        if self.heights is None:
            return np.zeros(xy.shape[:-1])
        hmap = self.heights
        fx = np.clip((xy[..., 0] - self.x0) / self.dx, 0.0, hmap.shape[0] - 1.001)
        fy = np.clip((xy[..., 1] - self.y0) / self.dy, 0.0, hmap.shape[1] - 1.001)
        x0, y0 = fx.astype(np.int64), fy.astype(np.int64)
        tx, ty = fx - x0, fy - y0
        z00, z01 = hmap[x0, y0], hmap[x0, y0 + 1]
        z10, z11 = hmap[x0 + 1, y0], hmap[x0 + 1, y0 + 1]
        return (1 - tx) * ((1 - ty) * z00 + ty * z01) + tx * ((1 - ty) * z10 + ty * z11)

    def outside(self, xy: np.ndarray, margin: float = OUTSIDE_MARGIN) -> bool:
        """The point is within ``margin`` of the height map's edge (never on a plane)."""
        if self.heights is None:
            return False
        high_x = self.x0 + (self.heights.shape[0] - 1) * self.dx - margin
        high_y = self.y0 + (self.heights.shape[1] - 1) * self.dy - margin
        return bool(xy[0] < self.x0 + margin or xy[1] < self.y0 + margin or xy[0] > high_x or xy[1] > high_y)


class HeightScan:
    """The training env's height scan: a grid of points in the base's yaw frame (metadata ``height_scan``)."""

    def __init__(self, cfg: dict[str, Any], ground: HeightMap):
        self.ground, self.offset, self.clip = ground, float(cfg["offset"]), float(cfg["clip"])
        xs = np.linspace(-cfg["size_x"] / 2, cfg["size_x"] / 2, cfg["points_x"]) if cfg["points_x"] > 1 else np.zeros(1)
        ys = np.linspace(-cfg["size_y"] / 2, cfg["size_y"] / 2, cfg["points_y"]) if cfg["points_y"] > 1 else np.zeros(1)
        gx, gy = np.meshgrid(xs, ys, indexing="ij")  # x-major, as in training
        self.points = np.stack([gx.ravel(), gy.ravel()], 1)
        """Scan points ``[P, 2]`` in the yaw frame (x forward, y left)."""

    def __call__(self, base_pos: np.ndarray, yaw: float) -> np.ndarray:
        """``[P]``: clip(base z - ground z at each point - offset)."""
        c, s = np.cos(yaw), np.sin(yaw)
        px, py = self.points[:, 0], self.points[:, 1]
        world = np.stack([base_pos[0] + c * px - s * py, base_pos[1] + s * px + c * py], -1)
        return np.clip(base_pos[2] - self.ground.height(world) - self.offset, -self.clip, self.clip)


def yaw_of(quat: np.ndarray) -> float:
    """Heading angle of a wxyz quaternion."""
    w, x, y, z = quat
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


@dataclass(frozen=True)
class TerrainEval:
    """Evaluation on one tile type at one level (play.py ``--terrain TYPE --level L``): straight-ahead commands."""

    type: str
    level: int
    lin_vel_x: tuple[float, float]
    """Forward speed command range (m/s); no sideways motion, no turning, no resampling."""
    episode_length_s: float


def tiles(meta: dict[str, Any], terrain_eval: TerrainEval | None) -> list[tuple[float, float]]:
    """The tile centres ``(x, y)`` episodes start on: every tile (``terrain_eval`` None), or the tiles of its type
    at its level; ``[(0, 0)]`` on a plane. One-line errors when the file's terrain has no such tiles."""
    terrain = meta.get("terrain")
    if terrain is None:
        if terrain_eval is not None:
            raise UserError(f"--terrain {terrain_eval.type}: the policy file's scene is a plane (exported from an env "
                            "without generated terrain); export it with play.py --checkpoint RUN --terrain "
                            f"{terrain_eval.type} --level {terrain_eval.level} --export-onnx FILE")
        return [(0.0, 0.0)]
    origins = terrain["origins"]
    if terrain_eval is None:
        return [(o[0], o[1]) for row in origins for o in row]
    types = terrain["column_types"]
    if terrain_eval.type not in types:
        raise UserError(f"--terrain={terrain_eval.type}: the policy file's terrain has no such tiles (its columns: "
                        f"{', '.join(dict.fromkeys(types))}); export it with play.py --checkpoint RUN --terrain "
                        f"{terrain_eval.type} --export-onnx FILE")
    if not 0 <= terrain_eval.level < terrain["levels"]:
        raise UserError(f"--level={terrain_eval.level} is not allowed; expected an integer in "
                        f"[0, {terrain['levels'] - 1}] (the policy file's terrain levels)")
    row = origins[terrain_eval.level]
    return [(row[j][0], row[j][1]) for j, t in enumerate(types) if t == terrain_eval.type]
