"""``play.py --sim2sim``: run an exported policy where its metadata says it belongs."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from contract import schema
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.terrain import TerrainEval


def run(path: str | Path, episodes: int, seed: int, terrain_eval: TerrainEval | None = None) -> dict[str, Any]:
    """The file's family (metadata ``task_family``) picks its module in ``contract.schema.FAMILIES``: reaching,
    tracking and locomotion policies run in plain MuJoCo, Gymnasium ones in Gymnasium; ``terrain_eval``: a
    locomotion policy on one tile type at one level (``deploy/sim2sim.py``)."""
    policy = OnnxPolicy(path)
    meta = policy.metadata
    fam = schema.family(meta)
    if fam not in schema.FAMILIES:
        named = f"names task family {fam!r}" if fam else "names no task family (metadata task_family)"
        raise UserError(f"policy file {path} {named}: sim2sim runs the families {', '.join(schema.FAMILIES)}")
    if terrain_eval is not None and fam != "locomotion":
        raise UserError(f"--terrain applies to locomotion policies; policy file {path} is a {fam} policy")
    module = importlib.import_module(schema.FAMILIES[fam].sim2sim)
    extra = {} if terrain_eval is None else {"terrain_eval": terrain_eval}
    metrics = module.run(policy, episodes, seed, **extra)
    return {"task": meta["task"], "policy": str(path), "runtime": f"onnxruntime in {module.RUNTIME}", **metrics}
