"""The geom pairs a MuJoCo model's broad phase checks, counted from the model, and those that could be skipped.

MuJoCo's collision stage considers a geom pair when the two geoms sit on different weld bodies (bodies welded
together count as one), are not a parent and its child (unless the model disables that filter,
``mjDSBL_FILTERPARENT``; the world body is never a parent here), have compatible ``contype`` / ``conaffinity``
bits (``ct1 & ca2 || ct2 & ca1``), and their bodies are not named in an ``<exclude>``; the file's explicit
``<pair>`` elements are checked on top. These are the pairs counted here: the candidates before the mid-phase's
bounding-volume tests, which run for each of them at every substep.

Each checked pair is put in one class:

- ``world``: a robot geom against a world geom (the floor, terrain): feet and termination contacts, kept;
- ``explicit``: a ``<pair>`` the file asks for, kept;
- ``parent_child``: a body against its parent (only with the parent filter disabled): skippable;
- ``self``: two bodies of the same robot through the generic contype / conaffinity bits (the file does not ask
  for them by a ``<pair>``): skippable unless the task needs the legs to collide with each other;
- ``visual``: a pair with a colliding mesh in a group that otherwise holds only non-colliding geoms (a visual
  mesh left colliding): skippable;
- ``other``: two different robots or free bodies: kept.
"""

from __future__ import annotations

import copy
import dataclasses

import mujoco
import numpy as np

SKIPPABLE = ("parent_child", "self", "visual")
"""The classes a task could skip (``bench.profile`` reports them, never removes them from a task)."""


@dataclasses.dataclass(frozen=True)
class Pair:
    """One checked geom pair."""

    geom1: str
    """The first geom's name (``geom <id>`` when unnamed) and its body."""
    geom2: str
    """The second geom's name and body."""
    kind: str
    """Its class (module docstring)."""
    ids: tuple[int, int]
    """The two geom ids, smaller first."""


def _geom_label(m: mujoco.MjModel, g: int) -> str:
    name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom {g}"
    body = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(m.geom_bodyid[g])) or f"body {m.geom_bodyid[g]}"
    return f"{name} ({body})"


def visual_meshes(m: mujoco.MjModel) -> np.ndarray:
    """``[ngeom]`` bool: a colliding mesh geom in a group whose other geoms are all non-colliding meshes or
    non-colliding geoms (a visual mesh left colliding)."""
    collides = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
    mesh = m.geom_type == mujoco.mjtGeom.mjGEOM_MESH
    out = np.zeros(m.ngeom, dtype=bool)
    for group in np.unique(m.geom_group):
        members = m.geom_group == group
        if (members & ~collides).sum() > (members & collides).sum():  # mostly non-colliding: a visual group
            out |= members & collides & mesh
    return out


def _candidates(m: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of the geom pairs the broad phase checks by the generic bits (module docstring)."""
    i, j = np.triu_indices(m.ngeom, k=1)
    weld = m.body_weldid[m.geom_bodyid]
    weld_parent = m.body_weldid[m.body_parentid[weld]]
    keep = weld[i] != weld[j]
    if not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT:
        child = (weld[i] == weld_parent[j]) | (weld[j] == weld_parent[i])
        keep &= ~(child & (weld[i] != 0) & (weld[j] != 0))
    ct, ca = m.geom_contype, m.geom_conaffinity
    keep &= ((ct[i] & ca[j]) != 0) | ((ct[j] & ca[i]) != 0)
    if m.nexclude:
        b1, b2 = m.geom_bodyid[i], m.geom_bodyid[j]
        signatures = set(m.exclude_signature.tolist())
        sig = (np.minimum(b1, b2) << 16) + np.maximum(b1, b2)
        keep &= ~np.isin(sig, list(signatures))
    return i[keep], j[keep]


def _kind(m: mujoco.MjModel, g1: int, g2: int, visual: np.ndarray) -> str:
    weld = m.body_weldid[m.geom_bodyid]
    w1, w2 = int(weld[g1]), int(weld[g2])
    if visual[g1] or visual[g2]:
        return "visual"
    if w1 == 0 or w2 == 0:
        return "world"
    if w1 == m.body_weldid[m.body_parentid[w2]] or w2 == m.body_weldid[m.body_parentid[w1]]:
        return "parent_child"
    if m.body_rootid[w1] == m.body_rootid[w2]:
        return "self"
    return "other"


def checked_pairs(m: mujoco.MjModel) -> list[Pair]:
    """Every geom pair the broad phase checks (module docstring), the explicit ``<pair>`` elements included."""
    visual = visual_meshes(m)
    i, j = _candidates(m)
    pairs = [Pair(_geom_label(m, a), _geom_label(m, b), _kind(m, a, b, visual), (int(a), int(b)))
             for a, b in zip(i, j, strict=True)]
    pairs += [Pair(_geom_label(m, int(a)), _geom_label(m, int(b)), "explicit", (min(a, b), max(a, b)))
              for a, b in zip(m.pair_geom1.tolist(), m.pair_geom2.tolist(), strict=True)]
    return pairs


def count_by_kind(pairs: list[Pair]) -> dict[str, int]:
    """Pairs per class, every class named (zeros included)."""
    kinds = ("world", "explicit", "other", *SKIPPABLE)
    return {k: sum(p.kind == k for p in pairs) for k in kinds}


def without_skippable(m: mujoco.MjModel) -> mujoco.MjModel:
    """A copy of ``m`` (bench only) in which no skippable pair is checked: each robot geom that collided with a
    world geom (floor, terrain) still collides with the world's colliding geoms, no longer with any other robot
    geom (the tasks simulate one robot per world); visual meshes and robot geoms that touched no world geom stop
    colliding. Done on the compiled model's bits: such robot geoms get ``contype`` 0 and ``conaffinity`` 1, the
    world's colliding geoms ``contype`` 1 and ``conaffinity`` 0."""
    out = copy.copy(m)
    ct, ca = m.geom_contype, m.geom_conaffinity
    collides = (ct != 0) | (ca != 0)
    on_world = m.body_weldid[m.geom_bodyid] == 0
    world = np.nonzero(collides & on_world)[0]
    touches_world = ((ct[:, None] & ca[world][None, :]) != 0) | ((ct[world][None, :] & ca[:, None]) != 0)
    robot = touches_world.any(axis=1) & ~on_world & ~visual_meshes(m)
    out.geom_contype[~on_world] = 0
    out.geom_conaffinity[~on_world] = robot[~on_world].astype(out.geom_conaffinity.dtype)
    out.geom_contype[world] = 1
    out.geom_conaffinity[world] = 0
    return out
