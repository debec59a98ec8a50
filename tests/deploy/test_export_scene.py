"""The scene an exported policy carries (format 2.4): without what only drawing uses, the same physics bit for bit;
every export names its task family, and a file of the previous version (2.3: no family for locomotion, the full
scene) is read with the old guess and plays the same.

The robot: ``examples/my_robot`` made mesh-heavy in a temporary copy (``tests/mesh_heavy_robot.py``: dense visual
meshes, a checker texture on a material, the base's inertia from its geoms, the visual mesh's mass included), so
the reduction shows and MuJoCo's explicit inertial for a discarded mass-bearing geom is exercised.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import zlib
from pathlib import Path

import mujoco
import numpy as np
import onnx
import pytest
import torch

from apps import sim2sim as dispatch
from contract import schema
from contract.errors import UserError
from contract.policy_format import FORMAT
from deploy import sim2sim
from deploy.onnx_policy import OnnxPolicy
from deploy.terrain import TerrainEval
from envs.registry import load_file_module, load_file_task
from envs.robots.humanoid import HUMANOID
from envs.robots.quadruped import QUADRUPED
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions
from envs.tasks.locomotion.config import NoiseConfig
from envs.tasks.scene_bytes import scene_bytes
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from tests.deploy.test_runtime_safety import with_metadata
from tests.mesh_heavy_robot import RINGS, SEGMENTS, mesh_heavy_robot

ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture(scope="module")
def robot_file(tmp_path_factory) -> Path:
    return mesh_heavy_robot(tmp_path_factory.mktemp("heavy"))


@pytest.fixture(scope="module")
def scenes(robot_file):
    """The training scene and the exported one of the mesh-heavy robot."""
    robot = load_file_module(f"{robot_file}:flat").MY_ROBOT
    return build(robot).model, build(robot, SceneOptions(discard_visual=True)).model


def _mjb(model: mujoco.MjModel) -> bytes:
    buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    return buffer.tobytes()


def test_the_exported_scene_leaves_out_visual_meshes_and_textures(scenes):
    full, small = scenes
    assert full.nmesh == 2 and full.nmeshvert >= 2 * RINGS * SEGMENTS - 10 and full.ntex >= 1
    assert small.nmesh == 0 and small.ntex == 0 and small.nmat == 0
    visual = (full.geom_contype == 0) & (full.geom_conaffinity == 0)
    assert small.ngeom == full.ngeom - int(visual.sum()) and not ((small.geom_contype == 0)
                                                                   & (small.geom_conaffinity == 0)).any()
    before, after = len(zlib.compress(_mjb(full), 9)), len(zlib.compress(_mjb(small), 9))
    assert after * 20 < before, (before, after)
    for name in ("body_mass", "body_inertia", "body_ipos", "body_iquat", "dof_length", "actuator_gainprm"):
        np.testing.assert_array_equal(getattr(small, name), getattr(full, name), err_msg=name)
    assert full.body_mass[full.body("base").id] > 0.5  # the base's mass came from its geoms, the visual one too


def _trace(full: mujoco.MjModel, small: mujoco.MjModel) -> list[np.ndarray]:
    """400 steps of each model from its default state under the same random controls: state, sensors, contacts."""
    out = []
    for model in (full, small):
        data = mujoco.MjData(model)
        rng = np.random.default_rng(0)
        trace = []
        for _ in range(400):  # the robot falls onto the floor and its legs flail: contacts of every kind
            data.ctrl[:] = rng.uniform(-1.0, 1.0, model.nu) * 0.6
            mujoco.mj_step(model, data)
            trace.append(np.concatenate([data.qpos, data.qvel, data.sensordata, [data.ncon]]))
        out.append(np.array(trace))
    return out


def test_the_exported_scene_steps_bit_for_bit_as_the_full_one(scenes):
    full, small = _trace(*scenes)
    assert full[-1, -1] >= 1  # it touched the floor
    np.testing.assert_array_equal(full, small)


@pytest.mark.parametrize("robot", [QUADRUPED, HUMANOID], ids=lambda r: r.name)
def test_the_built_in_robots_exported_scenes_step_bit_for_bit(robot):
    full, small = build(robot).model, build(robot, SceneOptions(discard_visual=True)).model
    assert small.ngeom < full.ngeom and small.ntex == 0
    a, b = _trace(full, small)
    np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def exports(robot_file, tmp_path_factory):
    """A random policy of the mesh-heavy robot exported (2.4), and the same file as the previous version wrote it
    (2.3: no task_family, the training scene with its visuals)."""
    tmp = tmp_path_factory.mktemp("exports")
    task = load_file_task(f"{robot_file}:flat")
    cfg = task.default_config()
    env_cfg = cfg.env.__class__(num_envs=1, backend="native", noise=NoiseConfig(scale=0.0)).for_evaluation()
    env = task.make_env(env_cfg, torch.device("cpu"))
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, cfg.policy).eval()
    new = tmp / "new.onnx"
    export_onnx(policy, new, policy_metadata(task.name, 3, policy, env.export_metadata()))
    old = with_metadata(tmp, new, "old.onnx", **{"format": "legged-mjx-policy/2.3", "task_family": None,
                                                 "scene_mjb": scene_bytes(env.model)})
    return new, old


def test_an_export_names_its_family_and_a_23_file_is_read_with_the_old_guess(exports):
    new, old = exports
    meta = OnnxPolicy(new).metadata
    assert meta["format"] == FORMAT == "legged-mjx-policy/2.4" and meta["task_family"] == "locomotion"
    assert schema.problems(meta) == []
    raw = {p.key for p in onnx.load(str(old)).metadata_props}
    assert "task_family" not in raw
    old_meta = OnnxPolicy(old).metadata
    assert old_meta["format"] == "legged-mjx-policy/2.3" and old_meta["task_family"] == "locomotion"
    assert schema.problems(old_meta) == []
    assert old.stat().st_size > 5 * new.stat().st_size


def test_sim2sim_plays_the_new_and_the_old_file_alike(exports):
    new, old = exports
    a, b = dispatch.run(new, 2, 0), dispatch.run(old, 2, 0)
    assert a.pop("policy") != b.pop("policy")
    assert a == b and a["runtime"] == "onnxruntime in plain MuJoCo"


def test_older_files_get_the_family_the_old_rule_gave(tmp_path):
    old = {"format": "legged-mjx-policy/2.3"}
    assert schema.upgrade({**old, "env_id": "CartPole-v1"}, "f")["task_family"] == "gym"
    assert schema.upgrade({**old, "scene_mjb": "x", "task_family": "reach"}, "f")["task_family"] == "reach"
    assert schema.upgrade({**old, "scene_mjb": "x", "task_family": "track"}, "f")["task_family"] == "track"
    assert schema.upgrade({**old, "scene_mjb": "x"}, "f")["task_family"] == "locomotion"
    new = {"format": FORMAT, "scene_mjb": "x"}
    assert schema.upgrade(new, "f") == new and schema.family(new) == ""  # a 2.4 file is never guessed
    assert schema.problems({**new, "task_family": "swim"})[0] == ("task_family 'swim' is not one of locomotion, "
                                                                  "reach, track, gym")


def test_every_family_has_a_sim2sim_module_and_a_file_without_one_is_refused_in_one_line(exports, tmp_path):
    for name, fam in schema.FAMILIES.items():
        module = importlib.import_module(fam.sim2sim)
        assert callable(module.run) and module.RUNTIME.startswith("plain "), name
    new, _ = exports
    unnamed = with_metadata(tmp_path, new, "unnamed.onnx", **{"task_family": None})
    with pytest.raises(UserError, match=r"names no task family \(metadata task_family\): sim2sim runs the families "
                                        r"locomotion, reach, track, gym$"):
        dispatch.run(unnamed, 1, 0)
    other = with_metadata(tmp_path, new, "other.onnx", **{"task_family": "swim"})
    with pytest.raises(UserError, match="names task family 'swim': sim2sim runs"):
        dispatch.run(other, 1, 0)
    with pytest.raises(UserError, match="--terrain applies to locomotion policies; .* is a gym policy"):
        dispatch.run(with_metadata(tmp_path, new, "g.onnx", **{"task_family": "gym"}), 1, 0,
                     TerrainEval("stairs_up", 0, (0.5, 0.5), 5.0))


def test_export_size_reports_the_visual_bytes_of_the_old_file_and_none_of_the_new(exports):
    new, old = exports
    out = subprocess.run([sys.executable, "-m", "tools.export_size", str(old), str(new)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    blocks = out.stdout.split(str(new))
    numbers = [{line.split()[0]: line.split()[-1] for line in b.splitlines()[1:] if line.startswith("  ")}
               for b in blocks]
    assert int(numbers[0]["mjb_visual_mesh_bytes"].replace(",", "")) > 1_000_000
    assert int(numbers[0]["mjb_texture_bytes"].replace(",", "")) > 0
    assert numbers[1]["mjb_visual_mesh_bytes"] == "0" and numbers[1]["mjb_texture_bytes"] == "0"
    assert numbers[1]["task_family"] == "locomotion"


def test_the_plain_mujoco_families_share_one_skeleton():
    from deploy.plain_mujoco import PlainMujoco
    from deploy.sim2sim_reach import PlainMujocoArm
    from deploy.sim2sim_track import PlainMujocoTracker

    for cls in (sim2sim.PlainMujocoRobot, PlainMujocoArm, PlainMujocoTracker):
        assert issubclass(cls, PlainMujoco) and "reading" not in vars(cls) and "observe" not in vars(cls)
        assert "act" not in vars(cls) or cls is PlainMujocoTracker
