"""Typed config of the generated terrain (``env.terrain.*``) and of the height scan (``env.height_scan.*``).

The terrain is a grid of square tiles: ``levels`` rows of rising difficulty (level 0 to ``levels - 1``) by
``columns`` columns, each column one tile type, the types in the proportions of ``proportions``. Every shape
parameter grows linearly with the level (``<type>_per_level``), so level 5 is the issue's "medium" terrain for
a Go1-sized robot with the defaults: stairs of 7 cm, slopes of 15 degrees, rough ground of 4 cm.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal, Optional

from rl_core.config_io import check_types, require

MEDIUM_LEVEL = 5
"""The issue's "medium" difficulty with the default per-level steps: stairs of 7 cm, slopes of 15 degrees, rough
ground of 4 cm (play.py ``--terrain``'s default level)."""


@dataclass(frozen=True)
class TerrainProportions:
    """Share of the columns of each tile type (normalized to sum 1; 0 leaves a type out). A new tile type is one
    field here and its maker in ``envs/terrain/generator.py`` (``TILES``)."""

    flat: float = 0.1
    """Flat ground."""
    rough: float = 0.1
    """Random bumps (heights uniform within +-half the amplitude on a 0.2 m grid, interpolated; they fade in
    over 0.2 m outside the flat centre platform)."""
    slope_up: float = 0.1
    """An inverted pyramid: flat centre platform, slopes rising outwards."""
    slope_down: float = 0.1
    """A pyramid: flat centre platform, slopes falling outwards."""
    stairs_up: float = 0.2
    """Pyramid stairs rising outwards from the centre platform."""
    stairs_down: float = 0.2
    """Pyramid stairs falling outwards from the centre platform."""
    obstacles: float = 0.2
    """Discrete rectangular blocks, up and down, around the centre platform."""
    gaps: float = 0.0
    """A ring-shaped gap (1 m deep) around the centre platform."""

    def __post_init__(self) -> None:
        check_types(self, "env.terrain.proportions.")
        for f in fields(self):
            require(getattr(self, f.name) >= 0, f"env.terrain.proportions.{f.name}", getattr(self, f.name),
                    "a number >= 0")
        require(sum(getattr(self, f.name) for f in fields(self)) > 0, "env.terrain.proportions",
                {f.name: getattr(self, f.name) for f in fields(self)}, "at least one share > 0")

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in TILE_TYPES}


TILE_TYPES: tuple[str, ...] = tuple(f.name for f in fields(TerrainProportions))
"""Tile types: the fields of ``TerrainProportions``, each declared once there with its default share and what it
is (``up`` / ``down`` is what a robot starting on the tile's centre meets walking outwards); the generator's
``TILES`` gives each its heights, checked at import."""


@dataclass(frozen=True)
class TerrainConfig:
    """The ground: ``plane`` (flat, infinite) or ``generated`` (a heightfield of tiles with a curriculum)."""

    type: Literal["plane", "generated"] = "plane"
    """plane: the flat floor of ``quadruped-flat``. generated: the tile grid below, as a MuJoCo heightfield."""
    seed: int = 0
    """Seed of the terrain's random shapes (the same seed makes the same terrain)."""
    levels: int = 10
    """Rows of tiles, one per difficulty level (0 = easiest)."""
    columns: int = 10
    """Columns of tiles; each column is one tile type (``proportions``)."""
    tile_size: float = 8.0
    """Side of a square tile (m)."""
    horizontal_scale: float = 0.05
    """Spacing of the height samples (m). A step between two samples is a ramp this wide in a MuJoCo
    heightfield (its surface interpolates between samples): 5 cm makes a 7 cm stair edge a 54-degree ramp."""
    border: float = 10.0
    """Width of the flat border around the grid (m); an episode whose robot gets within 1 m of the outer edge
    ends as a time-out."""
    platform: float = 2.0
    """Side of the flat square at each tile's centre, where robots start (m)."""
    proportions: TerrainProportions = field(default_factory=TerrainProportions)
    """Share of each tile type among the columns."""
    rough_per_level: float = 0.008
    """rough: peak-to-peak bump height per level (m): 4 cm at level 5."""
    slope_per_level: float = 3.0
    """slope_up / slope_down: slope per level (degrees): 15 at level 5."""
    step_per_level: float = 0.014
    """stairs_up / stairs_down: step height per level (m): 7 cm at level 5."""
    step_width: float = 0.3
    """stairs: tread depth (m)."""
    obstacle_per_level: float = 0.015
    """obstacles: largest block height per level (m)."""
    gap_per_level: float = 0.06
    """gaps: gap width per level (m)."""
    curriculum: bool = True
    """Move each env's level up or down at its resets (legged_gym's rule); false: levels stay as drawn."""
    max_init_level: int = 0
    """At the start envs draw a level uniformly in [0, max_init_level] (curriculum) or over all levels (none).
    0: every robot first learns to walk on the flat level 0 of its tile type (legged_gym starts ANYmal at up to
    5; our quadruped starting at up to 4 still stood still after 210 iterations, 0.52 m/s tracking error, while
    the same config on a plane reached 0.19 m/s at iteration 129)."""
    fixed_level: Optional[int] = None
    """Every env on this level, curriculum off (evaluation on one difficulty); null: levels as drawn."""
    spawn_radius: float = 0.5
    """Robots start uniformly within this distance (m, per axis) of their tile's centre."""

    def __post_init__(self) -> None:
        check_types(self, "env.terrain.")
        require(self.levels >= 1, "env.terrain.levels", self.levels, "an integer >= 1")
        require(self.columns >= 1, "env.terrain.columns", self.columns, "an integer >= 1")
        require(self.horizontal_scale > 0, "env.terrain.horizontal_scale", self.horizontal_scale, "a number > 0")
        require(self.tile_size >= 4 * self.horizontal_scale, "env.terrain.tile_size", self.tile_size,
                "a number >= 4 x horizontal_scale")
        require(0 < self.platform < self.tile_size, "env.terrain.platform", self.platform,
                "a number in (0, tile_size)")
        require(self.border >= 0, "env.terrain.border", self.border, "a number >= 0")
        require(self.step_width > 0, "env.terrain.step_width", self.step_width, "a number > 0")
        require(0 <= self.slope_per_level * (self.levels - 1) < 80, "env.terrain.slope_per_level",
                self.slope_per_level, "degrees >= 0 whose top level stays below 80")
        for name in ("rough_per_level", "step_per_level", "obstacle_per_level", "gap_per_level"):
            require(getattr(self, name) >= 0, f"env.terrain.{name}", getattr(self, name), "a number >= 0")
        require(0 <= self.max_init_level < self.levels, "env.terrain.max_init_level", self.max_init_level,
                f"an integer in [0, levels - 1 = {self.levels - 1}]")
        require(self.fixed_level is None or 0 <= self.fixed_level < self.levels, "env.terrain.fixed_level",
                self.fixed_level, f"null or an integer in [0, levels - 1 = {self.levels - 1}]")
        require(0 <= self.spawn_radius < self.platform / 2, "env.terrain.spawn_radius", self.spawn_radius,
                "a number in [0, platform / 2)")


@dataclass(frozen=True)
class HeightScanConfig:
    """Terrain heights at a grid of points around the base, in the base's yaw frame (legged_gym's 187 points)."""

    enabled: bool = False
    """Add the scan to the observations (policy: noisy and clipped; privileged critic: exact)."""
    size_x: float = 1.6
    """Extent of the grid along the heading (m), centred on the base."""
    size_y: float = 1.0
    """Extent of the grid sideways (m), centred on the base."""
    points_x: int = 17
    """Points along the heading."""
    points_y: int = 11
    """Points sideways (odd: symmetric about the base, so the scan mirrors left-right)."""
    offset: float = 0.3
    """Observed value: base height - terrain height - offset (m), clipped to ``clip``, times 5 (legged_gym's
    scale)."""
    clip: float = 1.0
    """Clip of the observed values (m)."""
    noise: float = 0.05
    """Uniform noise on the policy's scan (m, times ``env.noise.scale``)."""

    def __post_init__(self) -> None:
        check_types(self, "env.height_scan.")
        require(self.points_x >= 1, "env.height_scan.points_x", self.points_x, "an integer >= 1")
        require(self.points_y >= 1 and self.points_y % 2 == 1, "env.height_scan.points_y", self.points_y,
                "an odd integer >= 1")
        require(self.size_x >= 0 and self.size_y >= 0, "env.height_scan.size_x / size_y",
                [self.size_x, self.size_y], "numbers >= 0")
        require(self.clip > 0, "env.height_scan.clip", self.clip, "a number > 0")
        require(self.noise >= 0, "env.height_scan.noise", self.noise, "a number >= 0")

    @property
    def num_points(self) -> int:
        return self.points_x * self.points_y
