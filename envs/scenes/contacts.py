"""The collision geoms of a robot file that the task watches, and the collision filter applied at assembly.

A geom collides when its contype or conaffinity is set, it is not on the world body and not in one of the spec's
``visual_groups``. The collision geoms of the bodies matched by ``termination_contacts`` / ``penalized_contacts``
(feet excepted) each get a contact sensor against the floor. Visual geoms are made never to collide; with
``collisions="feet"`` no collision geom but the feet's does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import mujoco

from contract.errors import UserError
from envs.robots.names import match_each
from envs.robots.spec import RobotSpec
from envs.scenes.feet import Feet


@dataclass(frozen=True)
class ContactGeoms:
    """Geom ids of the robot file (compiled on its own), sorted by what the task does with them."""

    visual: tuple[int, ...]
    """Geoms in the spec's visual groups (made never to collide)."""
    colliding: tuple[int, ...]
    """The other geoms that collide, world body excepted."""
    feet: tuple[int, ...]
    """Collision geoms of the feet, sorted."""
    termination: tuple[int, ...]
    """Collision geoms (feet excepted) of the ``termination_contacts`` bodies, body by body."""
    penalized: tuple[int, ...]
    """Collision geoms (feet excepted) of the ``penalized_contacts`` bodies, body by body."""
    penalized_body_of: tuple[int, ...]
    """For each penalized geom, the index of its body in ``penalized_bodies``."""
    penalized_bodies: tuple[str, ...]
    """The bodies matched by ``penalized_contacts``."""

    @property
    def sensed(self) -> set[int]:
        """Every geom a task sensor refers to."""
        return set(self.termination + self.penalized + self.feet)


def split_geoms(robot: RobotSpec, m0: mujoco.MjModel) -> tuple[list[int], list[int]]:
    """The visual geoms and the colliding ones (see ``ContactGeoms``)."""
    visual = [g for g in range(m0.ngeom) if int(m0.geom_group[g]) in robot.visual_groups]
    colliding = [g for g in range(m0.ngeom)
                 if (m0.geom_contype[g] or m0.geom_conaffinity[g]) and m0.geom_bodyid[g] != 0 and g not in visual]
    return visual, colliding


def contact_geoms(robot: RobotSpec, m0: mujoco.MjModel, bodies: list[str], visual: list[int],
                  colliding: list[int], feet: Feet) -> ContactGeoms:
    """The termination and penalized contact geoms by the spec's body regexes; one-line errors."""
    foot_geoms = sorted(feet.all_geoms)
    term, _, _ = _body_geoms(robot, "termination_contacts", robot.termination_contacts, m0, bodies, colliding,
                             foot_geoms)
    pen, pen_body_of, pen_bodies = _body_geoms(robot, "penalized_contacts", robot.penalized_contacts, m0, bodies,
                                               colliding, foot_geoms)
    return ContactGeoms(tuple(visual), tuple(colliding), tuple(foot_geoms), tuple(term), tuple(pen),
                        tuple(pen_body_of), tuple(pen_bodies))


def _body_geoms(robot: RobotSpec, field: str, patterns: tuple[str, ...], m0: mujoco.MjModel, bodies: list[str],
                colliding: list[int], foot_geoms: list[int]) -> tuple[list[int], list[int], list[str]]:
    """Collision geoms (feet excepted) of the bodies ``patterns`` match, the index of each one's body among the
    matched bodies, and those bodies' names."""
    for p in patterns:  # a foot geom's name where a body's is wanted
        feet = [m0.geom(g).name for g in foot_geoms if m0.geom(g).name and re.fullmatch(p, m0.geom(g).name)]
        if feet and not any(re.fullmatch(p, b) for b in bodies):
            raise UserError(f"robot spec '{robot.name}' field {field}: {p!r} matches no body but the foot geom(s) "
                            f"{', '.join(feet)}: a foot's floor contacts are steps, not {field.split('_')[0]} "
                            "contacts; leave it out (the field names bodies; the feet: foot_geoms / foot_bodies)")
    body_ids = match_each(robot.name, field, patterns, bodies, "bodies")
    geoms_of, body_of = [], []
    for k, b in enumerate(body_ids):
        own = [g for g in colliding if m0.geom_bodyid[g] == b]
        if own and all(g in foot_geoms for g in own):
            raise UserError(f"robot spec '{robot.name}' field {field}: body {bodies[b]!r} is a foot (all its collision "
                            f"geoms are foot geoms), so its floor contacts are steps, not {field.split('_')[0]} "
                            "contacts; leave it out (the feet: foot_geoms / foot_bodies)")
        for g in colliding:
            if m0.geom_bodyid[g] == b and g not in foot_geoms:
                geoms_of.append(g)
                body_of.append(k)
    return geoms_of, body_of, [bodies[b] for b in body_ids]


def name_geoms(rspec: mujoco.MjSpec, m0: mujoco.MjModel, bodies: list[str], geoms: Iterable[int]) -> dict[int, str]:
    """The name of each of ``geoms`` in ``rspec``; an unnamed one is named ``<body>_geom<id>`` (sensors refer to
    geoms by name; spec elements carry their compiled id after m0's compile)."""
    spec_geoms = {g.id: g for g in rspec.geoms}
    for g in geoms:
        if not spec_geoms[g].name:
            spec_geoms[g].name = f"{bodies[m0.geom_bodyid[g]]}_geom{g}"
    return {g: spec_geoms[g].name for g in geoms}


def filter_collisions(rspec: mujoco.MjSpec, contacts: ContactGeoms, collisions: str) -> None:
    """Visual geoms never collide; with ``collisions="feet"`` only the feet touch anything."""
    spec_geoms = {g.id: g for g in rspec.geoms}
    off = list(contacts.visual)
    if collisions == "feet":
        off += [g for g in contacts.colliding if g not in contacts.feet]
    for g in off:
        spec_geoms[g].contype = 0
        spec_geoms[g].conaffinity = 0
