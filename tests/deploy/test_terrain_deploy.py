"""sim2sim on generated terrain: the exported scene carries the heightfield, the numpy ground and height scan of
``deploy/terrain.py`` match the training env's, and an exported rough policy runs on one tile type and level."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from configs.catalog import get_task
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.sim2sim import PlainMujocoRobot, load_scene, run
from deploy.terrain import HeightMap, TerrainEval
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from tests.sim2sim_check import assert_sim2sim_observation_matches

ROOT = Path(__file__).resolve().parents[2]
STAIRS = TerrainEval("stairs_up", 5, (0.5, 0.8), 2.0)


def _rough_env(**changes):
    spec = get_task("quadruped-rough")
    cfg = spec.default_config()
    env_cfg = dataclasses.replace(cfg.env, num_envs=1, backend="native",
                                  noise=dataclasses.replace(cfg.env.noise, scale=0.0), **changes)
    return spec.make_env(env_cfg.for_evaluation(), torch.device("cpu")), cfg


@pytest.fixture(scope="module")
def rough():
    """The training terrain (every tile type), one env, noise off; a random policy exported with its metadata."""
    return _rough_env()


@pytest.fixture(scope="module")
def rough_onnx(rough, tmp_path_factory):
    env, cfg = rough
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy).eval()
    path = tmp_path_factory.mktemp("rough") / "rough.onnx"
    export_onnx(policy, path, policy_metadata("quadruped-rough", 0, policy, env.export_metadata()))
    return path


def test_metadata_carries_the_heightfield_scan_and_tiles(rough, rough_onnx):
    env, _ = rough
    meta = OnnxPolicy(rough_onnx).metadata
    model = load_scene(meta)
    assert model.nhfield == 1 and (model.hfield_ncol[0], model.hfield_nrow[0]) == env.terrain.heights.shape
    assert meta["height_scan"] == {"points_x": 17, "points_y": 11, "size_x": 1.6, "size_y": 1.0, "offset": 0.3,
                                   "clip": 1.0}
    assert meta["obs_layout"][-1] == ["height_scan", 187] and meta["success_distance"] == 4.0
    t = meta["terrain"]
    assert t["column_types"] == list(env.terrain.column_types) and t["levels"] == 10 and t["tile_size"] == 8.0
    np.testing.assert_allclose(t["origins"], env.terrain.origins, atol=1e-6)
    assert t["config"]["type"] == "generated" and t["config"]["proportions"]["stairs_up"] == 0.2
    assert rough_onnx.stat().st_size < 3_000_000  # the 2001 x 2001 heightfield compresses to about 1 MB


def test_numpy_height_lookup_matches_the_training_ground(rough, rough_onnx):
    env, _ = rough
    heights = HeightMap(load_scene(OnnxPolicy(rough_onnx).metadata))
    np.testing.assert_allclose(heights.heights, env.terrain.heights, atol=1e-6)
    rng = np.random.default_rng(0)
    points = rng.uniform(-12.0, 92.0, size=(20_000, 2))  # the whole map, its clamped border included
    points[:5000] = rng.uniform(30.0, 50.0, size=(5000, 2))  # and more on the stairs / obstacle tiles
    expected = env.ground.height(torch.tensor(points)).numpy()
    np.testing.assert_allclose(heights.height(points), expected, atol=1e-5, rtol=0)


def test_a_plane_scene_has_height_zero():
    env, _ = _rough_env(terrain=dataclasses.replace(get_task("quadruped-rough").default_config().env.terrain,
                                                    type="plane"))
    heights = HeightMap(env.model)
    assert heights.heights is None and not heights.outside(np.array([1e3, 1e3]))
    assert (heights.height(np.zeros((4, 2))) == 0).all()


def test_sim2sim_builds_the_training_observation_with_the_height_scan(tmp_path):
    """On stairs (level 5): the plain-MuJoCo observation, scan included, equals the training env's."""
    spec = get_task("quadruped-rough")
    cfg = spec.default_config()
    env_cfg = dataclasses.replace(cfg.env, num_envs=1, backend="native",
                                  noise=dataclasses.replace(cfg.env.noise, scale=0.0)).on_terrain("stairs_up", 5)
    env = spec.make_env(env_cfg, torch.device("cpu"))
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy).eval()
    path = tmp_path / "stairs.onnx"
    export_onnx(policy, path, policy_metadata("quadruped-rough", 0, policy, env.export_metadata()))
    scan = env.reset(seed=4)["policy"][0, -187:]  # the helper's first episode
    assert (scan.abs() > 0.05).any()  # a 7 cm stair edge is in view: the comparison covers the scan
    assert_sim2sim_observation_matches(env, path, steps=20)


def test_rough_policy_runs_on_one_tile_type_without_torch(rough_onnx):
    code = ("import sys, json; from apps.sim2sim import run; from deploy.terrain import TerrainEval; "
            "m = run(sys.argv[1], 2, 0, TerrainEval('stairs_up', 5, (0.5, 0.8), 2.0)); "
            "assert 'torch' not in sys.modules, 'torch was imported'; print(json.dumps(m))")
    proc = subprocess.run([sys.executable, "-c", code, str(rough_onnx)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)
    assert m["episodes"] == 2 and m["success"] in (0.0, 0.5, 1.0) and m["runtime"] == "onnxruntime in plain MuJoCo"
    assert m["mean_episode_length"] <= 100  # 2 s episodes at 50 Hz


def test_episodes_start_on_the_chosen_tiles(rough, rough_onnx, monkeypatch):
    env, _ = rough
    starts = []
    monkeypatch.setattr(PlainMujocoRobot, "fell", lambda self: True)  # one step per episode
    original = PlainMujocoRobot.reset

    def reset(self, yaw, start=(0.0, 0.0)):
        original(self, yaw, start)
        starts.append(self.data.qpos[:3].copy())

    monkeypatch.setattr(PlainMujocoRobot, "reset", reset)
    policy = OnnxPolicy(rough_onnx)
    m = run(policy, 3, 0, STAIRS)
    assert m["fall_rate"] == 1.0 and m["success"] == 0.0
    columns = [j for j, t in enumerate(env.terrain.column_types) if t == "stairs_up"]
    expected = [env.terrain.origins[5, columns[k % len(columns)]] for k in range(3)]
    for got, o in zip(starts, expected, strict=True):
        np.testing.assert_allclose(got, [o[0], o[1], o[2] + policy.metadata["base_height"]], atol=1e-5)


@pytest.mark.parametrize(("terrain_eval", "message"), [
    (TerrainEval("gaps", 5, (0.5, 0.8), 2.0), "--terrain=gaps: the policy file's terrain has no such tiles (its "
     "columns: flat, rough, slope_up, slope_down, stairs_up, stairs_down, obstacles); export it with play.py "
     "--checkpoint RUN --terrain gaps --export-onnx FILE"),
    (TerrainEval("stairs_up", 10, (0.5, 0.8), 2.0), "--level=10 is not allowed; expected an integer in [0, 9] "
     "(the policy file's terrain levels)"),
])
def test_tiles_the_file_lacks_are_one_line(rough_onnx, terrain_eval, message):
    with pytest.raises(UserError) as e:
        run(OnnxPolicy(rough_onnx), 1, 0, terrain_eval)
    assert str(e.value) == message


def test_render_model_keeps_the_floor_around_the_robot(rough):
    """Videos on terrain render a window of the heightfield at the same world coordinates, same joints."""
    env, _ = rough
    env.reset(seed=1)
    model = env.render_model(0)
    assert model.nq == env.model.nq and model.nbody == env.model.nbody
    assert model.hfield_nrow[0] * model.hfield_ncol[0] < env.model.hfield_nrow[0] * env.model.hfield_ncol[0] / 10
    b = env.robot.base_qpos_adr
    base = env.physics.read().qpos[0, b:b + 2].double().numpy()
    points = np.random.default_rng(1).uniform(-11.0, 11.0, size=(5000, 2)) + base
    np.testing.assert_allclose(HeightMap(model).height(points), env.ground.height(torch.tensor(points)).numpy(),
                               atol=1e-5, rtol=0)
