"""``play.py --sim2sim``: run an exported policy where its metadata says it belongs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract import schema
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.terrain import TerrainEval


def run(path: str | Path, episodes: int, seed: int, terrain_eval: TerrainEval | None = None) -> dict[str, Any]:
    """Reaching and tracking policies (metadata ``task_family: reach`` / ``track``) and locomotion policies
    (``scene_mjb``) run in plain MuJoCo, Gymnasium ones (``env_id``) in Gymnasium; ``terrain_eval``: a locomotion
    policy on one tile type at one level (``deploy/sim2sim.py``)."""
    policy = OnnxPolicy(path)
    meta = policy.metadata
    if schema.family(meta) == "reach":
        if terrain_eval is not None:
            raise UserError(f"--terrain applies to locomotion policies; policy file {path} is a reaching policy")
        from deploy import sim2sim_reach

        metrics = sim2sim_reach.run(policy, episodes, seed)
        where = "plain MuJoCo"
    elif schema.family(meta) == "track":
        if terrain_eval is not None:
            raise UserError(f"--terrain applies to locomotion policies; policy file {path} is a tracking policy")
        from deploy import sim2sim_track

        metrics = sim2sim_track.run(policy, episodes, seed)
        where = "plain MuJoCo"
    elif "scene_mjb" in meta and "base_joint" not in meta:  # another task without a floating base
        raise UserError(f"policy file {path} has a scene but no base_joint: sim2sim runs legged robots, reaching "
                        "arms (task_family reach) and Gymnasium policies only")
    elif "scene_mjb" in meta or "robot_xml" in meta:  # robot_xml: an older export (sim2sim says how to renew it)
        from deploy import sim2sim

        metrics = sim2sim.run(policy, episodes, seed, terrain_eval)
        where = "plain MuJoCo"
    elif terrain_eval is not None:
        raise UserError(f"--terrain applies to locomotion policies; policy file {path} is a Gymnasium policy")
    elif "env_id" in meta:
        from apps import gym_sim2sim

        metrics = gym_sim2sim.run(policy, episodes, seed)
        where = "plain Gymnasium"
    else:
        raise UserError(f"policy file {path} names neither a robot model nor a Gymnasium id in its metadata")
    return {"task": meta["task"], "policy": str(path), "runtime": f"onnxruntime in {where}", **metrics}
