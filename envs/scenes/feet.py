"""Feet of a robot file as they come: named collision geoms (``foot_geoms``) or bodies with any number of
collision geoms, named or not (``foot_bodies``), and the touch site the assembly adds around each foot.

Per foot the task reads one normal force (a ``touch`` sensor: the normal forces of the contacts inside the site
volume on the site's body, summed) and the world position and velocity of the site. A one-geom foot's site is its
geom grown by FOOT_SITE_MARGIN, at the geom's pose. A foot body with several collision geoms gets a box site: the
bounding box of those geoms (in the body frame) grown by FOOT_SITE_MARGIN, so a contact on any of them counts and
the position is the centre of that box.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from envs.robots.names import match_each, spec_error
from envs.robots.spec import RobotSpec
from contract.errors import UserError

FOOT_SITE_MARGIN = 0.012
"""The touch site of a foot is its collision geoms' shape (one geom) or bounding box (several) grown by this (m):
contacts on the geoms' surfaces lie inside."""


@dataclass(frozen=True)
class Feet:
    """The feet of a robot file, resolved against its compiled model."""

    names: tuple[str, ...]
    """Foot names (geom names for ``foot_geoms``, body names for ``foot_bodies``), in foot-column order."""
    geoms: tuple[tuple[int, ...], ...]
    """Collision geom ids of each foot."""
    bodies: tuple[int, ...]
    """Body id of each foot."""

    @property
    def all_geoms(self) -> set[int]:
        return {g for gs in self.geoms for g in gs}


def resolve_feet(robot: RobotSpec, m0: mujoco.MjModel, bodies: list[str], geoms: list[str],
                 colliding: list[int]) -> Feet:
    """The feet named by ``foot_geoms`` or ``foot_bodies`` (exactly one of them); one-line errors."""
    name = robot.name
    if bool(robot.foot_geoms) == bool(robot.foot_bodies):
        raise UserError(f"robot spec '{name}' field foot_geoms / foot_bodies: give exactly one of them")
    if robot.foot_geoms:
        named = [g for g in colliding if geoms[g]]
        for p in robot.foot_geoms:  # a regex over the geoms of one foot: name the body instead
            hits = match_each(name, "foot_geoms", [p], [geoms[g] for g in named], "named collision geoms")
            per_body: dict[int, int] = {}
            for i in hits:
                per_body[int(m0.geom_bodyid[named[i]])] = per_body.get(int(m0.geom_bodyid[named[i]]), 0) + 1
            for b, n in per_body.items():
                if n > 1:
                    many = ", ".join(repr(bodies[c]) for c, k in per_body.items() if k > 1)
                    raise UserError(f"robot spec '{name}' field foot_geoms: {p!r} matches {n} geoms of body "
                                    f"{bodies[b]!r}; use foot_bodies=({many}, ...)")
        picked = [named[i] for i in match_each(name, "foot_geoms", robot.foot_geoms, [geoms[g] for g in named],
                                               "named collision geoms")]
        return Feet(tuple(geoms[g] for g in picked), tuple((g,) for g in picked),
                    tuple(int(m0.geom_bodyid[g]) for g in picked))
    ids = match_each(name, "foot_bodies", robot.foot_bodies, bodies, "bodies")
    own = []
    for b in ids:
        gs = tuple(g for g in colliding if m0.geom_bodyid[g] == b)
        if not gs:
            raise spec_error(name, "foot_bodies", f"body {bodies[b]!r} has no collision geom",
                             [bodies[m0.geom_bodyid[g]] for g in colliding], "bodies with collision geoms")
        own.append(gs)
    return Feet(tuple(bodies[b] for b in ids), tuple(own), tuple(ids))


def add_foot_site(scene: mujoco.MjSpec, m0: mujoco.MjModel, geoms: tuple[int, ...], body: str, site: str) -> str:
    """The foot's touch site on ``body`` (see the module docstring); returns its name."""
    if len(geoms) == 1:
        return _site_around(scene, m0, geoms[0], body, site)
    corners = np.concatenate([_aabb_corners(m0, g) for g in geoms])
    low, high = corners.min(0) - FOOT_SITE_MARGIN, corners.max(0) + FOOT_SITE_MARGIN
    scene.body(body).add_site(name=site, type=mujoco.mjtGeom.mjGEOM_BOX, size=((high - low) / 2).tolist(),
                              pos=((high + low) / 2).tolist(), group=4, rgba=[1, 0, 0, 0.2])
    return site


def _aabb_corners(m0: mujoco.MjModel, g: int) -> np.ndarray:
    """The 8 corners of geom ``g``'s bounding box, in its body's frame."""
    center, half = m0.geom_aabb[g, :3], m0.geom_aabb[g, 3:]
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    local = center + signs * half
    rot = np.empty(9)
    mujoco.mju_quat2Mat(rot, m0.geom_quat[g])
    return local @ rot.reshape(3, 3).T + m0.geom_pos[g]


def _site_around(scene: mujoco.MjSpec, m0: mujoco.MjModel, g: int, body: str, site: str) -> str:
    """A site of the geom's shape grown by FOOT_SITE_MARGIN, at the geom's pose (a sphere for other shapes)."""
    t = int(m0.geom_type[g])
    size = np.array(m0.geom_size[g], dtype=float)
    shapes = {int(mujoco.mjtGeom.mjGEOM_SPHERE): 1, int(mujoco.mjtGeom.mjGEOM_CAPSULE): 1,
              int(mujoco.mjtGeom.mjGEOM_CYLINDER): 1, int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): 3,
              int(mujoco.mjtGeom.mjGEOM_BOX): 3}
    if t in shapes:
        size[:shapes[t]] += FOOT_SITE_MARGIN
    else:
        t, size = int(mujoco.mjtGeom.mjGEOM_SPHERE), np.array([m0.geom_rbound[g] + FOOT_SITE_MARGIN, 0.0, 0.0])
    scene.body(body).add_site(name=site, type=mujoco.mjtGeom(t), size=size.tolist(),
                              pos=m0.geom_pos[g].tolist(), quat=m0.geom_quat[g].tolist(), group=4,
                              rgba=[1, 0, 0, 0.2])
    return site
