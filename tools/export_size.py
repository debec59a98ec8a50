"""Where the bytes of an exported policy go: the file, its stored scene (``scene_mjb``) and what the scene holds.

    python -m tools.export_size policy.onnx [more.onnx ...] [--json sizes.json]

Per file: its size; the ``scene_mjb`` text (base64 of zlib level 9, as stored) and the MJB bytes it holds; the
MJB's meshes with their bounding-volume trees (split into those only visual-only geoms use, ``contype =
conaffinity = 0``, and the others), textures, heightfields and the rest; and the scene compressed with zlib
(level 9, what the file stores) and lzma (default preset) for comparison. Sizes in bytes; docs/deploy.md quotes
them.
"""

from __future__ import annotations

import argparse
import base64
import json
import lzma
import sys
import zlib
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy

PER_MESH = {("mesh_vertadr", "mesh_vertnum"): ("mesh_vert", "mesh_polymapadr", "mesh_polymapnum"),
            ("mesh_normaladr", "mesh_normalnum"): ("mesh_normal",),
            ("mesh_texcoordadr", "mesh_texcoordnum"): ("mesh_texcoord",),
            ("mesh_faceadr", "mesh_facenum"): ("mesh_face", "mesh_facenormal", "mesh_facetexcoord"),
            ("mesh_bvhadr", "mesh_bvhnum"): ("bvh_aabb", "bvh_child", "bvh_nodeid", "bvh_depth"),
            ("mesh_octadr", "mesh_octnum"): ("oct_aabb", "oct_child", "oct_depth", "oct_coeff")}
"""(each mesh's first row, its row count) -> the model arrays whose rows those are (a mesh's bounding-volume tree
and octree included)."""
SHARED = ("mesh_graph", "mesh_polyvert", "mesh_polynormal", "mesh_polymap", "mesh_polyadr", "mesh_polynum",
          "mesh_polyvertadr", "mesh_polyvertnum")
"""Mesh arrays without a per-mesh row range here: shared out by vertex count."""


def _nbytes(model: mujoco.MjModel, name: str) -> int:
    value = getattr(model, name, None)
    return int(value.nbytes) if isinstance(value, np.ndarray) else 0


def _row_bytes(model: mujoco.MjModel, name: str) -> float:
    value = getattr(model, name, None)
    return float(value.nbytes) / value.shape[0] if isinstance(value, np.ndarray) and value.shape[0] else 0.0


def visual_only_meshes(model: mujoco.MjModel) -> np.ndarray:
    """Per mesh: whether only visual-only geoms (``contype = conaffinity = 0``) use it."""
    visual_only = np.ones(model.nmesh, dtype=bool)
    used = np.zeros(model.nmesh, dtype=bool)
    for g in range(model.ngeom):
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH and model.geom_dataid[g] >= 0:
            used[model.geom_dataid[g]] = True
            if model.geom_contype[g] or model.geom_conaffinity[g]:
                visual_only[model.geom_dataid[g]] = False
    return visual_only & used


def mesh_bytes(model: mujoco.MjModel) -> tuple[int, int]:
    """(bytes of the meshes only visual-only geoms use, bytes of the other meshes) in the MJB's arrays."""
    per_mesh = np.zeros(model.nmesh)
    for (_, num), arrays in PER_MESH.items():
        counts = getattr(model, num, np.zeros(model.nmesh))
        per_mesh += counts * sum(_row_bytes(model, a) for a in arrays)
    verts = model.mesh_vertnum.astype(float)
    if model.nmesh and verts.sum():
        per_mesh += sum(_nbytes(model, a) for a in SHARED) * verts / verts.sum()
    visual = int(round(float(per_mesh[visual_only_meshes(model)].sum())))
    return visual, int(round(float(per_mesh.sum()))) - visual


def sizes(path: Path) -> dict[str, Any]:
    """The numbers of one policy file (module docstring)."""
    meta = OnnxPolicy(path).metadata
    out: dict[str, Any] = {"file": str(path), "format": meta["format"], "task_family": meta["task_family"],
                           "file_bytes": path.stat().st_size}
    if "scene_mjb" not in meta:
        return out
    mjb = zlib.decompress(base64.b64decode(meta["scene_mjb"]))
    model = mujoco.MjModel.from_binary_path("scene.mjb", {"scene.mjb": mjb})
    visual, collision = mesh_bytes(model)
    textures, hfields = _nbytes(model, "tex_data"), _nbytes(model, "hfield_data")
    visual_geoms = int(((model.geom_contype == 0) & (model.geom_conaffinity == 0)).sum())
    out.update({
        "scene_mjb_chars": len(meta["scene_mjb"]), "mjb_bytes": len(mjb), "mjb_zlib9_bytes": len(zlib.compress(mjb, 9)),
        "mjb_lzma_bytes": len(lzma.compress(mjb)),
        "geoms": int(model.ngeom), "visual_only_geoms": visual_geoms, "meshes": int(model.nmesh),
        "mesh_vertices": int(model.nmeshvert), "mesh_faces": int(model.nmeshface), "textures": int(model.ntex),
        "mjb_visual_mesh_bytes": visual, "mjb_other_mesh_bytes": collision, "mjb_texture_bytes": textures,
        "mjb_heightfield_bytes": hfields, "mjb_other_bytes": len(mjb) - visual - collision - textures - hfields})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("policies", nargs="+", help="exported ONNX files")
    p.add_argument("--json", help="also write the numbers to this file")
    args = p.parse_args(argv)
    try:
        rows = [sizes(Path(f)) for f in args.policies]
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for row in rows:
        print(row["file"])
        for key, value in row.items():
            if key != "file":
                print(f"  {key:24s} {value:>12,}" if isinstance(value, int) else f"  {key:24s} {value:>12}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
