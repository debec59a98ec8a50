"""The 3D scene of the web viewer: every robot of the batch and the floor or terrain, built from the MjModel.

The geoms of each body that share a colour are merged into one mesh (in the body's frame) and drawn as one
viser batched mesh with an instance per env, so a tick sends one small message per (body, colour): the body
positions and orientations of all envs, found by ``mj_kinematics`` from the physics state. The world body's
geoms (plane, heightfield, boxes) are sent once. The followed robot gets its own colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from apps.web.shapes import geom_mesh, quat_to_matrix

VISIBLE_GROUPS = (0, 1, 2)
"""Geom groups shown (MuJoCo's viewer shows these by default)."""
FOLLOWED_COLOR = (235, 100, 10)
"""Colour of the robot the camera follows."""
FLOOR_SHADE = 0.8
"""Planes are drawn in their colour times this (a checker texture's white would glare)."""
MATERIAL = "toon5"
"""viser material of the robots: five-tone shading is cheaper than "standard" (PBR) for a software renderer."""
TERRAIN_WINDOW = 6.0
"""A heightfield is drawn within this many metres (per axis) of the followed robot, redrawn when it walks half
of that away (the full field can be millions of triangles)."""
PLANE_HALF_SIZE = 25.0
"""Half size (m) of the grid drawn for an infinite plane."""


@dataclass
class _Part:
    body: int
    color: np.ndarray
    """uint8 RGB of the other robots."""
    handle: object
    """viser ``BatchedMeshHandle``."""


def spread(num_envs: int, spacing: float) -> np.ndarray:
    """Offsets ``[num_envs, 3]`` that lay robots out on a square grid of ``spacing`` metres around the origin."""
    side = int(np.ceil(np.sqrt(num_envs)))
    i = np.arange(num_envs)
    xy = np.stack([i // side, i % side], axis=1) * spacing - (side - 1) * spacing / 2
    return np.column_stack([xy, np.zeros(num_envs)])


def _rgb(model: mujoco.MjModel, g: int) -> np.ndarray:
    rgba = model.mat_rgba[model.geom_matid[g]] if model.geom_matid[g] >= 0 else model.geom_rgba[g]
    return (np.clip(rgba[:3], 0.0, 1.0) * 255).astype(np.uint8)


def _visible(model: mujoco.MjModel, g: int) -> bool:
    return int(model.geom_group[g]) in VISIBLE_GROUPS and float(model.geom_rgba[g][3]) > 0.0


def _in_body_frame(model: mujoco.MjModel, g: int, verts: np.ndarray) -> np.ndarray:
    rot = quat_to_matrix(model.geom_quat[g])
    return (verts @ rot.T + model.geom_pos[g]).astype(np.float32)


class RobotScene:
    """The scene of one model with ``num_envs`` robots; ``update(qpos)`` moves them."""

    def __init__(self, server, model: mujoco.MjModel, num_envs: int, offsets: np.ndarray, prefix: str = "/scene"):
        self.server, self.model, self.num_envs, self.prefix = server, model, num_envs, prefix
        self.offsets = offsets
        """``[num_envs, 3]`` added to each robot's position on the page (robots that share a plane's origin are
        laid out side by side; each still walks in its own simulation)."""
        self.data = mujoco.MjData(model)
        self.followed = 0
        self.parts: list[_Part] = []
        self._static: list[object] = []
        self._hfields: dict[int, object] = {}
        self._hfield_center: np.ndarray | None = None
        self.root = server.scene.add_frame(prefix, show_axes=False)
        """Parent of everything: ``center_on`` shifts it so that the orbit camera stays on the followed robot."""
        self._add_world()
        self._add_bodies()
        self.xpos = np.zeros((num_envs, model.nbody, 3))
        self.xquat = np.zeros((num_envs, model.nbody, 4))

    def _add_world(self) -> None:
        m, scene = self.model, self.server.scene
        for g in range(m.ngeom):
            if m.geom_bodyid[g] != 0 or not _visible(m, g):
                continue
            color = tuple(int(c) for c in _rgb(m, g))
            if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE:
                color = tuple(int(c * FLOOR_SHADE) for c in color)  # a white (textured) floor: grey, for contrast
                sx, sy = (float(s) if s > 0 else PLANE_HALF_SIZE for s in m.geom_size[g][:2])
                pos, quat = m.geom_pos[g], m.geom_quat[g]
                self._static.append(scene.add_grid(f"{self.prefix}/world/grid{g}", width=2 * sx, height=2 * sy,
                                                   plane="xy", cell_size=0.5, section_size=2.0,
                                                   position=tuple(pos + [0, 0, 5e-3]), wxyz=tuple(quat)))
                self._static.append(scene.add_box(f"{self.prefix}/world/floor{g}", color=color,
                                                  dimensions=(2 * sx, 2 * sy, 0.01),
                                                  position=tuple(pos - [0, 0, 0.005]), wxyz=tuple(quat),
                                                  cast_shadow=False))
                continue
            if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD:
                self._hfields[g] = None  # drawn around the followed robot by show_terrain_near
                continue
            mesh = geom_mesh(m, g)
            if mesh is None:
                continue
            verts, faces = mesh
            self._static.append(scene.add_mesh_simple(f"{self.prefix}/world/geom{g}", vertices=verts, faces=faces,
                                                      color=color, position=tuple(m.geom_pos[g]),
                                                      wxyz=tuple(m.geom_quat[g]), flat_shading=False,
                                                      cast_shadow=False))

    def _add_bodies(self) -> None:
        m = self.model
        groups: dict[tuple[int, tuple[int, ...]], list[tuple[np.ndarray, np.ndarray]]] = {}
        for g in range(m.ngeom):
            body = int(m.geom_bodyid[g])
            if body == 0 or not _visible(m, g):
                continue
            mesh = geom_mesh(m, g)
            if mesh is None:
                continue
            key = (body, tuple(int(c) for c in _rgb(m, g)))
            groups.setdefault(key, []).append((_in_body_frame(m, g, mesh[0]), mesh[1]))
        ident = np.tile([1.0, 0.0, 0.0, 0.0], (self.num_envs, 1)).astype(np.float32)
        far = np.zeros((self.num_envs, 3), dtype=np.float32)
        for (body, color), meshes in groups.items():
            offsets = np.cumsum([0] + [len(v) for v, _ in meshes[:-1]])
            verts = np.concatenate([v for v, _ in meshes])
            faces = np.concatenate([f + o for (_, f), o in zip(meshes, offsets, strict=True)]).astype(np.uint32)
            rgb = np.array(color, dtype=np.uint8)
            handle = self.server.scene.add_batched_meshes_simple(
                f"{self.prefix}/robots/body{body}_{len(self.parts)}", vertices=verts, faces=faces,
                batched_wxyzs=ident, batched_positions=far, batched_colors=self._colors(rgb), lod="off",
                cast_shadow=False, material=MATERIAL)
            self.parts.append(_Part(body, rgb, handle))

    def _colors(self, rgb: np.ndarray) -> np.ndarray:
        colors = np.tile(rgb, (self.num_envs, 1))
        colors[self.followed] = FOLLOWED_COLOR
        return colors

    def follow(self, index: int) -> None:
        """Colour robot ``index`` as the followed one."""
        self.followed = index
        for part in self.parts:
            part.handle.batched_colors = self._colors(part.color)  # type: ignore[attr-defined]

    def show_terrain_near(self, xy: np.ndarray) -> None:
        """Draw the heightfields within ``TERRAIN_WINDOW`` of ``xy`` (world), if not drawn near there already."""
        if not self._hfields or (self._hfield_center is not None
                                 and np.abs(xy - self._hfield_center).max() < TERRAIN_WINDOW / 2):
            return
        m = self.model
        self._hfield_center = np.asarray(xy, dtype=float).copy()
        for g, old in self._hfields.items():
            local = quat_to_matrix(m.geom_quat[g]).T @ (np.array([xy[0], xy[1], 0.0]) - m.geom_pos[g])
            mesh = geom_mesh(m, g, (float(local[0]), float(local[1]), TERRAIN_WINDOW))
            assert mesh is not None
            if old is not None:
                old.remove()  # type: ignore[attr-defined]
            color = tuple(int(c) for c in _rgb(m, g))
            self._hfields[g] = self.server.scene.add_mesh_simple(
                f"{self.prefix}/world/hfield{g}", vertices=mesh[0], faces=mesh[1], color=color,
                position=tuple(m.geom_pos[g]), wxyz=tuple(m.geom_quat[g]), flat_shading=True, cast_shadow=False)

    def center_on(self, xy: np.ndarray) -> None:
        """Shift the whole scene so that the point ``xy`` (as drawn) is at the origin, where the camera looks."""
        self.root.position = (-float(xy[0]), -float(xy[1]), 0.0)

    def update(self, qpos: np.ndarray) -> None:
        """Move every robot to ``qpos`` ``[num_envs, nq]`` (one message per part, applied together)."""
        m, d = self.model, self.data
        for i in range(self.num_envs):
            d.qpos[:] = qpos[i]
            mujoco.mj_kinematics(m, d)
            self.xpos[i] = d.xpos + self.offsets[i]
            self.xquat[i] = d.xquat
        with self.server.atomic():
            for part in self.parts:
                part.handle.batched_positions = self.xpos[:, part.body].astype(np.float32)  # type: ignore[attr-defined]
                part.handle.batched_wxyzs = self.xquat[:, part.body].astype(np.float32)  # type: ignore[attr-defined]

    def remove(self) -> None:
        drawn = [h for h in self._hfields.values() if h is not None]
        for handle in self._static + drawn + [p.handle for p in self.parts] + [self.root]:
            handle.remove()  # type: ignore[attr-defined]
        self._static, self.parts = [], []
