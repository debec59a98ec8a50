"""The terrain's height map, made in numpy from ``TerrainConfig`` (deterministic for a seed).

Coordinates: the tile grid starts at world (0, 0); level ``i`` spans x in [i, i + 1) x tile_size, column ``j``
spans y in [j, j + 1) x tile_size; a flat border surrounds it. Sample ``[a, b]`` of ``heights`` lies at
x = a x h - border, y = b x h - border (h = horizontal scale). Every tile's outer edge is at height 0, so
neighbouring tiles meet without a step, and its centre platform is flat (where robots start).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from envs.terrain.config import TILE_TYPES, TerrainConfig

ROUGH_GRID = 0.2
"""Spacing (m) of the random heights of rough tiles, interpolated onto the height map."""
GAP_DEPTH = 1.0
"""Depth of a gap (m)."""
OBSTACLES_PER_TILE = 24
"""Blocks per obstacle tile."""


@dataclass(frozen=True)
class Terrain:
    """A generated terrain."""

    heights: np.ndarray
    """Height map ``[nx, ny]`` (m, float32)."""
    horizontal_scale: float
    """Sample spacing (m)."""
    border: float
    """Width of the flat border (m): sample [0, 0] lies at world (-border, -border)."""
    origins: np.ndarray
    """Start point of each tile ``[levels, columns, 3]``: its centre and the ground height there (m)."""
    column_types: tuple[str, ...]
    """Tile type of each column."""
    tile_size: float
    """Side of a tile (m)."""

    @property
    def levels(self) -> int:
        return int(self.origins.shape[0])

    @property
    def columns(self) -> int:
        return int(self.origins.shape[1])

    def height_at(self, x: float, y: float) -> float:
        """Bilinear height at world (x, y) (what the height scan reads)."""
        h = self.horizontal_scale
        fx = min(max((x + self.border) / h, 0.0), self.heights.shape[0] - 1.0)
        fy = min(max((y + self.border) / h, 0.0), self.heights.shape[1] - 1.0)
        x0, y0 = min(int(fx), self.heights.shape[0] - 2), min(int(fy), self.heights.shape[1] - 2)
        tx, ty = fx - x0, fy - y0
        z = self.heights[x0:x0 + 2, y0:y0 + 2].astype(np.float64)
        return float((1 - tx) * ((1 - ty) * z[0, 0] + ty * z[0, 1]) + tx * ((1 - ty) * z[1, 0] + ty * z[1, 1]))


def column_types(cfg: TerrainConfig) -> tuple[str, ...]:
    """Tile type of each column: column j takes the type whose cumulative share first exceeds j / columns."""
    shares = np.array([cfg.proportions.as_dict()[t] for t in TILE_TYPES], dtype=float)
    cumulative = np.cumsum(shares / shares.sum())
    out = []
    for j in range(cfg.columns):
        choice = j / cfg.columns + 1e-3
        out.append(TILE_TYPES[min(int(np.searchsorted(cumulative, choice, side="right")), len(TILE_TYPES) - 1)])
    return tuple(out)


def generate(cfg: TerrainConfig) -> Terrain:
    """The height map of ``cfg`` (see the module docstring for its layout)."""
    h = cfg.horizontal_scale
    n = int(round(cfg.tile_size / h))
    nb = int(round(cfg.border / h))
    heights = np.zeros((2 * nb + cfg.levels * n + 1, 2 * nb + cfg.columns * n + 1), dtype=np.float32)
    types = column_types(cfg)
    rng = np.random.default_rng(cfg.seed)
    origins = np.zeros((cfg.levels, cfg.columns, 3), dtype=np.float32)
    for i in range(cfg.levels):
        for j, kind in enumerate(types):
            tile = make_tile(kind, i, cfg, rng)
            heights[nb + i * n: nb + (i + 1) * n, nb + j * n: nb + (j + 1) * n] = tile
            c = n // 2
            origins[i, j] = ((i + 0.5) * cfg.tile_size, (j + 0.5) * cfg.tile_size, float(tile[c, c]))
    return Terrain(heights=heights, horizontal_scale=h, border=nb * h, origins=origins, column_types=types,
                   tile_size=cfg.tile_size)


@dataclass(frozen=True)
class _TileGrid:
    """The sample grid of one tile: coordinates from its centre and distances the tile shapes are made of."""

    n: int
    """Samples per side."""
    cx: np.ndarray
    """x of each sample from the centre ``[n, n]`` (m)."""
    cy: np.ndarray
    """y of each sample from the centre ``[n, n]`` (m)."""
    r: np.ndarray
    """Square-ring distance from the centre, max(|x|, |y|) ``[n, n]`` (m)."""
    out: np.ndarray
    """Distance outwards from the platform's edge, 0 on the platform ``[n, n]`` (m)."""
    edge: float
    """Distance from the platform's edge to the tile's edge (m)."""
    rim: float
    """Samples with ``r`` at least this lie on the tile's edge ring (kept at height 0)."""


def _grid(cfg: TerrainConfig) -> _TileGrid:
    h = cfg.horizontal_scale
    n = int(round(cfg.tile_size / h))
    centre = (np.arange(n) - n // 2) * h  # sample n // 2 is the tile's centre
    cx, cy = np.meshgrid(centre, centre, indexing="ij")
    r = np.maximum(np.abs(cx), np.abs(cy))  # square rings around the centre
    half_platform = cfg.platform / 2
    return _TileGrid(n, cx, cy, r, (r - half_platform).clip(min=0.0), cfg.tile_size / 2 - half_platform,
                     cfg.tile_size / 2 - h)


def _flat(g: _TileGrid, level: int, cfg: TerrainConfig, rng: np.random.Generator) -> np.ndarray:
    return np.zeros((g.n, g.n))


def _rough(g: _TileGrid, level: int, cfg: TerrainConfig, rng: np.random.Generator) -> np.ndarray:
    amplitude = cfg.rough_per_level * level
    coarse_n = int(math.ceil(cfg.tile_size / ROUGH_GRID)) + 1
    coarse = rng.uniform(-amplitude / 2, amplitude / 2, size=(coarse_n, coarse_n))
    pos = np.arange(g.n) * cfg.horizontal_scale / ROUGH_GRID
    # the bumps fade in over one rough grid step outside the platform (flat, no step at its edge)
    tile = _bilinear(coarse, pos, pos) * np.clip(g.out / ROUGH_GRID, 0.0, 1.0)
    tile[[0, -1], :] = 0.0
    tile[:, [0, -1]] = 0.0
    return tile


def _slope(g: _TileGrid, level: int, cfg: TerrainConfig, up: bool) -> np.ndarray:
    grade = math.tan(math.radians(cfg.slope_per_level * level))
    tile = grade * (g.out - g.edge) if up else grade * (g.edge - g.out)
    return np.where(g.r >= g.rim, 0.0, tile)


def _stairs(g: _TileGrid, level: int, cfg: TerrainConfig, up: bool) -> np.ndarray:
    step, half_platform = cfg.step_per_level * level, cfg.platform / 2
    count = np.where(g.r < half_platform, 0.0, np.floor((g.r - half_platform) / cfg.step_width) + 1)
    top = math.floor(g.edge / cfg.step_width) + 1
    tile = step * (count - top) if up else step * (top - count)
    return np.where(g.r >= g.rim, 0.0, tile)


def _obstacles(g: _TileGrid, level: int, cfg: TerrainConfig, rng: np.random.Generator) -> np.ndarray:
    tile = np.zeros((g.n, g.n))
    height = cfg.obstacle_per_level * level
    for _ in range(OBSTACLES_PER_TILE):
        w, d = rng.uniform(0.3, 1.0, size=2)
        x0, y0 = rng.uniform(-cfg.tile_size / 2, cfg.tile_size / 2 - 0.3, size=2)
        box = (g.cx >= x0) & (g.cx < x0 + w) & (g.cy >= y0) & (g.cy < y0 + d)
        tile[box] = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.0) * height
    tile[g.r < cfg.platform / 2] = 0.0
    tile[g.r >= g.rim] = 0.0  # blocks may reach the tile's edge: it stays at 0 like the others
    return tile


def _gaps(g: _TileGrid, level: int, cfg: TerrainConfig, rng: np.random.Generator) -> np.ndarray:
    half_platform, width = cfg.platform / 2, cfg.gap_per_level * level
    return np.where((g.r >= half_platform) & (g.r < half_platform + width), -GAP_DEPTH, 0.0)


TILES: dict[str, Callable[[_TileGrid, int, TerrainConfig, np.random.Generator], np.ndarray]] = {
    "flat": _flat,
    "rough": _rough,
    "slope_up": lambda g, level, cfg, rng: _slope(g, level, cfg, up=True),
    "slope_down": lambda g, level, cfg, rng: _slope(g, level, cfg, up=False),
    "stairs_up": lambda g, level, cfg, rng: _stairs(g, level, cfg, up=True),
    "stairs_down": lambda g, level, cfg, rng: _stairs(g, level, cfg, up=False),
    "obstacles": _obstacles,
    "gaps": _gaps,
}
"""Tile type -> heights of one tile (float64, ``[n, n]``); the keys are ``TILE_TYPES`` (the fields of
``TerrainProportions``), in their order."""
if tuple(TILES) != TILE_TYPES:
    raise ValueError(f"terrain: the tile makers {tuple(TILES)} are not the tile types {TILE_TYPES}")


def make_tile(kind: str, level: int, cfg: TerrainConfig, rng: np.random.Generator) -> np.ndarray:
    """Heights ``[n, n]`` (m) of one tile of type ``kind`` at ``level``; its edge is at height 0."""
    if kind not in TILES:
        raise ValueError(f"unknown tile type {kind!r}; types: {', '.join(TILE_TYPES)}")
    return TILES[kind](_grid(cfg), level, cfg, rng).astype(np.float32)


def _bilinear(grid: np.ndarray, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """``grid`` sampled at fractional indices ``px`` (rows) x ``py`` (columns)."""
    x0 = np.clip(np.floor(px).astype(int), 0, grid.shape[0] - 2)
    y0 = np.clip(np.floor(py).astype(int), 0, grid.shape[1] - 2)
    tx, ty = (px - x0)[:, None], (py - y0)[None, :]
    g = grid
    return ((1 - tx) * ((1 - ty) * g[x0][:, y0] + ty * g[x0][:, y0 + 1])
            + tx * ((1 - ty) * g[x0 + 1][:, y0] + ty * g[x0 + 1][:, y0 + 1]))
