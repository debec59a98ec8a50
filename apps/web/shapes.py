"""Triangle meshes of MuJoCo geoms, in the geom's own frame, for the web viewer (numpy only).

``geom_mesh(model, g)`` gives ``(vertices [V, 3] float32, faces [F, 3] uint32)`` for spheres, capsules,
ellipsoids, cylinders, boxes, meshes and heightfields; planes have no closed mesh (``None``: the scene draws a
grid instead). Counter-clockwise faces seen from outside.
"""

from __future__ import annotations

import mujoco
import numpy as np

Mesh = tuple[np.ndarray, np.ndarray]

RINGS = 8
"""Latitude rings of a sphere / capsule half (more: rounder, larger messages)."""
SEGMENTS = 16
MAX_HFIELD_SIDE = 400
"""Most heightfield samples drawn per side (a 2001 x 2001 terrain is 8 million triangles: too much to send)."""
"""Segments around the axis of spheres, capsules and cylinders."""


def _lathe(profile: list[tuple[float, float]]) -> Mesh:
    """A surface of revolution about z: ``profile`` is (radius, z) from the bottom pole to the top pole."""
    angles = np.linspace(0.0, 2 * np.pi, SEGMENTS, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    verts, faces = [], []
    for r, z in profile:
        verts.append(np.column_stack([ring * r, np.full(SEGMENTS, z)]))
    n = len(profile)
    for i in range(n - 1):
        for j in range(SEGMENTS):
            a, b = i * SEGMENTS + j, i * SEGMENTS + (j + 1) % SEGMENTS
            c, d = a + SEGMENTS, b + SEGMENTS
            faces += [(a, b, d), (a, d, c)]
    v = np.concatenate(verts)
    # close the ends with a fan around a centre vertex
    bottom, top = len(v), len(v) + 1
    v = np.concatenate([v, [[0.0, 0.0, profile[0][1]], [0.0, 0.0, profile[-1][1]]]])
    last = (n - 1) * SEGMENTS
    for j in range(SEGMENTS):
        faces.append((bottom, (j + 1) % SEGMENTS, j))
        faces.append((top, last + j, last + (j + 1) % SEGMENTS))
    return v.astype(np.float32), np.asarray(faces, dtype=np.uint32)


def _rounded(radius: float, half_length: float) -> Mesh:
    """A capsule along z (``half_length`` 0: a sphere)."""
    lat = np.linspace(-np.pi / 2, np.pi / 2, 2 * RINGS + 1)[1:-1]
    lower = [(radius * np.cos(a), radius * np.sin(a) - half_length) for a in lat[lat <= 0]]
    upper = [(radius * np.cos(a), radius * np.sin(a) + half_length) for a in lat[lat >= 0]]
    profile = [(0.0, -radius - half_length)] + lower + upper + [(0.0, radius + half_length)]
    return _lathe(profile)


def box(half: np.ndarray) -> Mesh:
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float32) * half
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], dtype=np.uint32)
    return corners.astype(np.float32), faces


def heightfield(model: mujoco.MjModel, h: int, window: tuple[float, float, float] | None = None) -> Mesh:
    """The top surface of heightfield ``h`` (MuJoCo's layout: ``size`` = (x, y half sizes, z top, z base)), or of
    its part within ``window`` = (x, y, half size) in the heightfield's frame; at most ``MAX_HFIELD_SIDE`` samples
    a side (coarser beyond)."""
    rows, cols = int(model.hfield_nrow[h]), int(model.hfield_ncol[h])
    sx, sy, sz, _ = model.hfield_size[h]
    adr = int(model.hfield_adr[h])
    z = model.hfield_data[adr:adr + rows * cols].reshape(rows, cols) * sz
    x = np.linspace(-sx, sx, cols)
    y = np.linspace(-sy, sy, rows)
    if window is not None:
        cx, cy, half = window
        keep_x = np.flatnonzero(np.abs(x - cx) <= half)
        keep_y = np.flatnonzero(np.abs(y - cy) <= half)
        if len(keep_x) < 2 or len(keep_y) < 2:  # the window is off the field: nothing to draw there
            keep_x, keep_y = np.arange(2), np.arange(2)
        x, y, z = x[keep_x], y[keep_y], z[np.ix_(keep_y, keep_x)]
    stride = max(1, int(np.ceil(max(len(x), len(y)) / MAX_HFIELD_SIDE)))
    x, y, z = x[::stride], y[::stride], z[::stride, ::stride]
    rows, cols = len(y), len(x)
    xx, yy = np.meshgrid(x, y)
    verts = np.stack([xx.ravel(), yy.ravel(), z.ravel()], axis=1).astype(np.float32)
    idx = np.arange(rows * cols).reshape(rows, cols)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    faces = np.concatenate([np.stack([a, b, d], 1), np.stack([a, d, c], 1)]).astype(np.uint32)
    return verts, faces


def geom_mesh(model: mujoco.MjModel, g: int, window: tuple[float, float, float] | None = None) -> Mesh | None:
    """The mesh of geom ``g`` in its own frame, or None for a plane (or a type without a surface); a heightfield
    only within ``window`` (x, y, half size in the geom's frame) when given."""
    t = mujoco.mjtGeom
    kind, size = int(model.geom_type[g]), model.geom_size[g]
    if kind == t.mjGEOM_SPHERE:
        return _rounded(float(size[0]), 0.0)
    if kind == t.mjGEOM_CAPSULE:
        return _rounded(float(size[0]), float(size[1]))
    if kind == t.mjGEOM_ELLIPSOID:
        v, f = _rounded(1.0, 0.0)
        return (v * size).astype(np.float32), f
    if kind == t.mjGEOM_CYLINDER:
        r, h = float(size[0]), float(size[1])
        return _lathe([(r, -h), (r, h)])
    if kind == t.mjGEOM_BOX:
        return box(size)
    if kind == t.mjGEOM_MESH:
        m = int(model.geom_dataid[g])
        va, vn = int(model.mesh_vertadr[m]), int(model.mesh_vertnum[m])
        fa, fn = int(model.mesh_faceadr[m]), int(model.mesh_facenum[m])
        return (model.mesh_vert[va:va + vn].astype(np.float32),
                model.mesh_face[fa:fa + fn].astype(np.uint32))
    if kind == t.mjGEOM_HFIELD:
        return heightfield(model, int(model.geom_dataid[g]), window)
    return None


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of unit quaternions ``[..., 4]`` (w, x, y, z)."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)
