"""The ground under the robots, on the torch side: where each env starts, the terrain curriculum and the
height scan. Fixed shapes, no host sync: it runs inside the rollout loop (and in the CUDA-graphed step).

On a ``plane`` every env starts at the origin (the plane is infinite) and the ground height is 0 everywhere;
on a ``generated`` terrain each env has a column (its tile type, fixed by its index) and a level (its row),
starts on that tile's centre platform, and moves between levels at its resets (``update_levels``).
"""

from __future__ import annotations

import torch

from envs.terrain.config import HeightScanConfig, TerrainConfig
from envs.terrain.generator import Terrain


class Ground:
    """Start positions, curriculum levels and height lookups for ``num_envs`` envs on ``terrain`` (None: plane)."""

    def __init__(self, cfg: TerrainConfig, terrain: Terrain | None, scan: HeightScanConfig, num_envs: int,
                 device: torch.device, generator: torch.Generator):
        self.cfg, self.terrain, self.device, self.generator = cfg, terrain, device, generator
        N = num_envs
        self.levels = torch.zeros(N, dtype=torch.long, device=device)
        """Each env's terrain level (checkpointed with the task state); written in place (a CUDA-graphed step
        keeps reading the same buffer)."""
        if terrain is None:
            self.columns = torch.zeros(N, dtype=torch.long, device=device)
            self.origins = torch.zeros(1, 1, 3, device=device)
            self.heights = None
        else:
            C = terrain.columns
            self.columns = torch.div(torch.arange(N, device=device) * C, N, rounding_mode="floor")
            self.origins = torch.tensor(terrain.origins, dtype=torch.float32, device=device)
            self.heights = torch.tensor(terrain.heights, dtype=torch.float32, device=device)
            self._inv_scale = 1.0 / terrain.horizontal_scale
            self._border = terrain.border
        self.max_level = (terrain.levels - 1) if terrain is not None else 0
        xs = torch.linspace(-scan.size_x / 2, scan.size_x / 2, scan.points_x) if scan.points_x > 1 else torch.zeros(1)
        ys = torch.linspace(-scan.size_y / 2, scan.size_y / 2, scan.points_y) if scan.points_y > 1 else torch.zeros(1)
        gx, gy = torch.meshgrid(xs, ys, indexing="ij")  # x-major: point (i, j) is column i * points_y + j
        self.scan_points = torch.stack([gx.flatten(), gy.flatten()], 1).to(device)
        """Scan points ``[P, 2]`` in the base's yaw frame (x forward, y left)."""

    # ------------------------------------------------------------------------------------------------ levels
    def draw_levels(self) -> None:
        """Levels at the start of a run: uniform in [0, max_init_level] with the curriculum, over all levels
        without, or ``fixed_level`` everywhere."""
        if self.terrain is None:
            return
        if self.cfg.fixed_level is not None:
            self.levels.fill_(min(self.cfg.fixed_level, self.max_level))
            return
        top = self.cfg.max_init_level if self.cfg.curriculum else self.max_level
        self.levels.copy_(torch.randint(0, top + 1, self.levels.shape, generator=self.generator, device=self.device))

    def update_levels(self, mask: torch.Tensor, base_xy: torch.Tensor, commands: torch.Tensor,
                      episode_s: float) -> None:
        """legged_gym's curriculum, for the masked envs at the end of their episodes: up a level after walking
        more than half a tile from the start, down after covering less than half the commanded distance of a
        full episode, and an env past the top level goes to a random level."""
        if self.terrain is None or not self.cfg.curriculum or self.cfg.fixed_level is not None:
            return
        start = self.origins[self.levels, self.columns, :2]
        walked = torch.norm(base_xy - start, dim=1)
        up = walked > self.terrain.tile_size / 2
        down = (walked < torch.norm(commands[:, :2], dim=1) * episode_s * 0.5) & ~up
        levels = self.levels + (up & mask).long() - (down & mask).long()
        random = torch.randint(0, self.max_level + 1, levels.shape, generator=self.generator, device=self.device)
        self.levels.copy_(torch.where(levels > self.max_level, random, levels.clamp(min=0)))

    def start_positions(self) -> torch.Tensor:
        """``[N, 3]``: each env's tile centre and the ground height there, plus a uniform offset in the platform
        (plane: the origin)."""
        start = self.origins[self.levels, self.columns]
        if self.terrain is None or self.cfg.spawn_radius == 0:
            return start.expand(self.levels.shape[0], 3).clone()
        r = self.cfg.spawn_radius
        offset = (torch.rand(start.shape[0], 2, generator=self.generator, device=self.device) * 2 - 1) * r
        xy = start[:, :2] + offset
        return torch.cat([xy, self.height(xy).unsqueeze(1)], 1)

    def travelled(self, base_xy: torch.Tensor) -> torch.Tensor:
        """``[N]``: horizontal distance of each base from its tile's centre (plane: from the origin)."""
        return torch.norm(base_xy - self.origins[self.levels, self.columns, :2], dim=1)

    def outside(self, base_xy: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
        """``[N]`` bool: the base is within ``margin`` (m) of the height map's edge, beyond which there is no
        ground (never on a plane). The task ends such episodes as time-outs."""
        if self.heights is None:
            return torch.zeros(base_xy.shape[0], dtype=torch.bool, device=base_xy.device)
        low = -self._border + margin
        high_x = (self.heights.shape[0] - 1) / self._inv_scale - self._border - margin
        high_y = (self.heights.shape[1] - 1) / self._inv_scale - self._border - margin
        x, y = base_xy[:, 0], base_xy[:, 1]
        return (x < low) | (y < low) | (x > high_x) | (y > high_y)

    def mean_level(self) -> torch.Tensor:
        return self.levels.float().mean()

    # ------------------------------------------------------------------------------------------------ heights
    def height(self, xy: torch.Tensor) -> torch.Tensor:
        """Ground height ``[...]`` at world points ``xy [..., 2]`` (bilinear in the height map; 0 on a plane)."""
        if self.heights is None:
            return torch.zeros(xy.shape[:-1], device=xy.device)
        return self._bilinear(xy[..., 0], xy[..., 1])

    def _bilinear(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Bilinear height map lookup at world coordinates ``x``, ``y`` (one shape; not modified). Four
        ``index_select`` on the flat map (on the CPU a quarter of the time of ``map[index]`` / ``torch.take`` at
        scan sizes) and the arithmetic in place on fresh temporaries (a scan of 1024 envs is 190k points: each
        new temporary costs about as much as the operation): the values of the plain formula, bit for bit."""
        assert self.heights is not None
        nx, ny = self.heights.shape
        fx = (x + self._border).mul_(self._inv_scale).clamp_(0, nx - 1.001)
        fy = (y + self._border).mul_(self._inv_scale).clamp_(0, ny - 1.001)
        x0, y0 = fx.floor(), fy.floor()  # >= 0: the integer parts
        i00 = (x0.long() * ny).add_(y0.long()).flatten()
        tx, ty = fx.sub_(x0), fy.sub_(y0)
        flat = self.heights.view(-1)

        def at(offset: int) -> torch.Tensor:
            return flat.index_select(0, i00 + offset if offset else i00).view(tx.shape)

        z00, z01, z10, z11 = at(0), at(1), at(ny), at(ny + 1)
        # (1 - tx) * ((1 - ty) * z00 + ty * z01) + tx * ((1 - ty) * z10 + ty * z11)
        uy = 1 - ty
        near = z00.mul_(uy).add_(z01.mul_(ty))
        far = z10.mul_(uy).add_(z11.mul_(ty))
        return near.mul_(1 - tx).add_(far.mul_(tx))

    def scan(self, base_pos: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
        """``[N, P]``: base height minus the ground height at each scan point (points turned by the base's yaw)."""
        c, s = torch.cos(yaw).unsqueeze(1), torch.sin(yaw).unsqueeze(1)
        px, py = self.scan_points[:, 0], self.scan_points[:, 1]
        wx = (base_pos[:, 0:1] + c * px).sub_(s * py)
        wy = (base_pos[:, 1:2] + s * px).add_(c * py)
        if self.heights is None:
            return base_pos[:, 2:3] - torch.zeros_like(wx)
        return self._bilinear(wx, wy).neg_().add_(base_pos[:, 2:3])  # z - ground, exactly

