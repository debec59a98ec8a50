"""Feet of a robot file as they come: named collision geoms (``foot_geoms``), one geom of a body picked by its
class, type or index (``FootGeom`` in ``foot_geoms``: unnamed geoms), or bodies with any number of collision geoms,
named or not (``foot_bodies``), and the touch site the assembly adds around each foot.

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

from contract.errors import UserError
from envs.robots.names import match_each, spec_error
from envs.robots.spec import GEOM_TYPES, FootGeom, RobotSpec

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
                 colliding: list[int], classes: list[str] | None = None) -> Feet:
    """The feet named by ``foot_geoms`` or ``foot_bodies`` (exactly one of them); ``classes``: each geom's default
    class name (for ``FootGeom.geom_class``); one-line errors."""
    name = robot.name
    if bool(robot.foot_geoms) == bool(robot.foot_bodies):
        raise UserError(f"robot spec '{name}' field foot_geoms / foot_bodies: give exactly one of them")
    if not robot.foot_geoms:
        return _foot_bodies(robot, m0, bodies, colliding)
    names: list[str] = []
    picked: list[int] = []
    for k, entry in enumerate(robot.foot_geoms):
        if isinstance(entry, FootGeom):
            for b, g in _picked_geoms(robot, f"foot_geoms[{k}]", entry, m0, bodies, colliding, classes or []):
                names.append(bodies[b])
                picked.append(g)
            continue
        for g in _named_geoms(robot, entry, m0, bodies, geoms, colliding):
            names.append(geoms[g])
            picked.append(g)
    for g in picked:
        if picked.count(g) > 1:
            raise UserError(f"robot spec '{name}' field foot_geoms: the geom of foot {names[picked.index(g)]!r} is "
                            "picked twice; each foot once")
    return Feet(tuple(names), tuple((g,) for g in picked), tuple(int(m0.geom_bodyid[g]) for g in picked))


def _named_geoms(robot: RobotSpec, pattern: str, m0: mujoco.MjModel, bodies: list[str], geoms: list[str],
                 colliding: list[int]) -> list[int]:
    """Named collision geoms a ``foot_geoms`` pattern matches (a regex over the geoms of one foot: name the body
    instead)."""
    name = robot.name
    named = [g for g in colliding if geoms[g]]
    hits = match_each(name, "foot_geoms", [pattern], [geoms[g] for g in named], "named collision geoms")
    per_body: dict[int, int] = {}
    for i in hits:
        per_body[int(m0.geom_bodyid[named[i]])] = per_body.get(int(m0.geom_bodyid[named[i]]), 0) + 1
    for b, n in per_body.items():
        if n > 1:
            many = ", ".join(repr(bodies[c]) for c, k in per_body.items() if k > 1)
            raise UserError(f"robot spec '{name}' field foot_geoms: {pattern!r} matches {n} geoms of body "
                            f"{bodies[b]!r}; use foot_bodies=({many}, ...), or FootGeom(body, geom_class= / type= / "
                            "index=) for one geom of it")
    return [named[i] for i in hits]


def _geom_type_name(m0: mujoco.MjModel, g: int) -> str:
    return mujoco.mjtGeom(int(m0.geom_type[g])).name.removeprefix("mjGEOM_").lower()


def _picked_geoms(robot: RobotSpec, field: str, fg: FootGeom, m0: mujoco.MjModel, bodies: list[str],
                  colliding: list[int], classes: list[str]) -> list[tuple[int, int]]:
    """(body, geom) per body ``fg.body`` matches: the one collision geom its class, type or index picks."""
    name = robot.name
    given = [k for k in ("geom_class", "type", "index") if getattr(fg, k) is not None]
    if len(given) != 1:
        raise UserError(f"robot spec '{name}' field {field}: give exactly one of geom_class, type or index "
                        f"(got {', '.join(given) or 'none'})")
    if fg.type is not None and fg.type not in GEOM_TYPES:
        raise UserError(f"robot spec '{name}' field {field}.type: {fg.type!r} is not allowed; allowed: "
                        f"{', '.join(GEOM_TYPES)}")
    out = []
    for b in match_each(name, f"{field}.body", [fg.body], bodies, "bodies"):
        own = [g for g in colliding if m0.geom_bodyid[g] == b]
        described = [f"{k}: {classes[g] if g < len(classes) else '?'} {_geom_type_name(m0, g)}"
                     for k, g in enumerate(own)]
        if fg.index is not None:
            hits = [own[fg.index]] if 0 <= fg.index < len(own) else []
        elif fg.type is not None:
            hits = [g for g in own if _geom_type_name(m0, g) == fg.type]
        else:
            hits = [g for g in own if g < len(classes) and classes[g] == fg.geom_class]
        if len(hits) != 1:
            what = (f"index {fg.index}" if fg.index is not None else f"type {fg.type!r}" if fg.type is not None
                    else f"class {fg.geom_class!r}")
            raise UserError(f"robot spec '{name}' field {field}: {what} picks {len(hits)} of the {len(own)} collision "
                            f"geoms of body {bodies[b]!r} (one needed); its collision geoms (index: class type): "
                            f"{', '.join(described) or '(none)'}")
        out.append((b, hits[0]))
    return out


def _foot_bodies(robot: RobotSpec, m0: mujoco.MjModel, bodies: list[str], colliding: list[int]) -> Feet:
    name = robot.name
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
