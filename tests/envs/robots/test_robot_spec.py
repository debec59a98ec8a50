"""RobotSpec: bad specs stop with one line and exit status 2 before any env exists; names resolve by name."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import mujoco
import numpy as np
import pytest
import torch

import train
from contract.errors import UserError
from envs.robots.quadruped import QUADRUPED
from envs.robots.spec import FILE_ACTUATORS
from envs.scenes.assemble import build
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion import rewards as R
from envs.tasks.locomotion.config import NoiseConfig
from tests.locomotion_tasks import EXAMPLE_TASK, make_task_env

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_DIR = ROOT / "examples" / "my_robot"

ROBOT_FILE = '''
from pathlib import Path
from configs.locomotion import flat_task
from envs.robots.spec import ActuatorGroup, RobotSpec
ROBOT = RobotSpec(
    name="bad", mjcf=Path(__file__).with_name("my_robot.xml"), base_body="base",
    joints=("FR_.*_joint", "FL_.*_joint", "RR_.*_joint", "RL_.*_joint"),
    default_pose={".*_hip_joint": 0.0, ".*_thigh_joint": 0.9, ".*_calf_joint": -1.5},
    actuators=(ActuatorGroup(".*", kp=20.0, kd=0.5, effort_limit=30.0),),
    action_scale=0.25, base_height=0.32, foot_geoms=("FR", "FL", "RR", "RL"),
    termination_contacts=("base", ".*_thigh"), penalized_contacts=(".*_calf",))
flat = flat_task("bad-flat", ROBOT)
'''

BAD_SPECS = {  # case -> (replace this in ROBOT_FILE, by this), expected field, a word of the listing
    "unknown joint": (('"RL_.*_joint")', '"RL_.*_joint", "tail_joint")'), "field joints", "FL_hip_joint"),
    "regex matches nothing": (('"RL_.*_joint")', '"RL_.*_jnt")'), "field joints", "FL_hip_joint"),
    "joint matched twice": (('"RL_.*_joint")', '"RL_.*_joint", ".*_hip_joint")'), "matched twice", "FL_hip_joint"),
    "pose matched twice": (('".*_calf_joint": -1.5', '".*_calf_joint": -1.5, "FR_.*": 0.0'), "field default_pose",
                           "FR_hip_joint"),
    "unknown foot": (('foot_geoms=("FR",', 'foot_geoms=("FR_toe",'), "field foot_geoms", "FL"),
    "foot body without collision geoms": (('foot_geoms=("FR", "FL", "RR", "RL")', 'foot_bodies=(".*_hip",)'),
                                          "field foot_bodies", "FL_calf"),
    "unknown contact body": (('"base", ".*_thigh"', '"trunk", ".*_thigh"'), "field termination_contacts", "FL_thigh"),
    "base without a free joint": (('base_body="base"', 'base_body="FL_thigh"'), "field base_body", "base"),
    "unknown base": (('base_body="base"', 'base_body="torso"'), "field base_body", "FL_hip"),
    "actuator group misses joints": (('ActuatorGroup(".*",', 'ActuatorGroup(".*_calf_joint",'), "field actuators",
                                     "FR_hip_joint"),
    "file does not import": (("from pathlib import Path", "from pathlib import Path\nimport not_a_module"),
                             "does not import", "not_a_module"),
    "no such task": (("flat = flat_task", "walk = flat_task"), "has no task 'flat'", "walk"),
}


def _robot_dir(tmp_path: Path) -> Path:
    d = tmp_path / "robot"
    shutil.copytree(EXAMPLE_DIR, d)
    return d


def _expect_one_line_exit_2(capsys, argv: list[str], *words: str) -> str:
    code = train.main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.parametrize("case", list(BAD_SPECS))
def test_bad_spec_fails_before_anything_is_built(case, tmp_path, capsys, monkeypatch):
    (old, new), field, listed = BAD_SPECS[case]
    d = _robot_dir(tmp_path)
    assert old in ROBOT_FILE
    (d / "bad.py").write_text(ROBOT_FILE.replace(old, new))
    built = []
    monkeypatch.setattr(LocomotionEnv, "__init__", lambda *a, **k: built.append(1))
    run_dir = tmp_path / "run"
    _expect_one_line_exit_2(capsys, ["--task", f"{d / 'bad.py'}:flat", "--run-dir", str(run_dir)], field, listed)
    assert not built and not run_dir.exists()


def test_mjcf_that_does_not_compile_gives_mujocos_message(tmp_path, capsys):
    d = _robot_dir(tmp_path)
    (d / "bad.py").write_text(ROBOT_FILE)
    xml = (d / "my_robot.xml").read_text().replace('<geom class="visual" mesh="trunk"/>',
                                                   '<geom class="visual" mesh="nope"/>')
    (d / "my_robot.xml").write_text(xml)
    err = _expect_one_line_exit_2(capsys, ["--task", f"{d / 'bad.py'}:flat", "--run-dir", str(tmp_path / "run")],
                                  "field mjcf", "does not compile", "nope")
    assert "\n" not in err


def test_missing_task_file_is_one_line(tmp_path, capsys):
    _expect_one_line_exit_2(capsys, ["--task", f"{tmp_path / 'nope.py'}:flat"], "does not exist")


def test_reward_table_and_weights_must_match():
    R.check_weights({name: 1.0 for name in R.TERMS})
    with pytest.raises(UserError, match="env.rewards.jump_height has no reward term"):
        R.check_weights({**{name: 1.0 for name in R.TERMS}, "jump_height": 1.0})
    with pytest.raises(UserError, match="reward term 'collision' has no weight"):
        R.check_weights({name: 1.0 for name in R.TERMS if name != "collision"})


def test_actuator_order_differing_from_qpos_order_does_not_flip_observations():
    """The example's qpos order is FL, FR, RL, RR and its motors are FR, FL, RR, RL; the policy order is FR, FL,
    RR, RL. Observed joint positions must equal qpos at the named joints, and each servo must drive its joint."""
    env = make_task_env(EXAMPLE_TASK, num_envs=4, backend="native", noise=NoiseConfig(scale=0.0))
    m, rb = env.model, env.robot
    assert rb.joint_names[:4] == ("FR_hip_joint", "FR_thigh_joint", "FR_calf_joint", "FL_hip_joint")
    assert list(rb.joint_qpos_adr) != sorted(rb.joint_qpos_adr)  # really another order than the file's
    for i, name in enumerate(rb.joint_names):  # servo i drives the joint of policy index i
        a = rb.ctrl_from_policy.index(i)
        assert mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, m.actuator_trnid[a, 0]) == name
        assert m.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE  # the file's motors were replaced
    env.reset(seed=0)
    g = torch.Generator().manual_seed(0)
    for _ in range(5):
        obs, *_ = env.step(torch.randn(4, 12, generator=g))
    q = env.physics.read().qpos
    J = env.num_joints
    joint_obs = obs["policy"][:, 12:12 + J] + env.default_joint_pos
    for i, name in enumerate(rb.joint_names):
        torch.testing.assert_close(joint_obs[:, i], q[:, m.joint(name).qposadr[0]], atol=1e-6, rtol=0)
    # an action on the FR hip moves the FR hip, not the FL one (qpos index 7 is FL_hip_joint in the file)
    env.reset(seed=1)
    action = torch.zeros(4, 12)
    action[:, 0] = 2.0
    for _ in range(10):
        env.step(action)
    q = env.physics.read().qpos
    fr, fl = m.joint("FR_hip_joint").qposadr[0], m.joint("FL_hip_joint").qposadr[0]
    assert (q[:, fr] - rb.default_joint_pos[0] > 0.2).all() and (q[:, fl].abs() < 0.2).all()


def test_file_actuators_equal_the_created_servos():
    """The quadruped's own position actuators (``actuators='file'``) give the same model as servos made by name."""
    made, own = build(QUADRUPED), build(dataclasses.replace(QUADRUPED, actuators=FILE_ACTUATORS))
    for field in ("actuator_gainprm", "actuator_biasprm", "actuator_forcerange", "actuator_trnid"):
        np.testing.assert_array_equal(getattr(made.model, field), getattr(own.model, field))
    assert own.kp == made.kp and own.kd == made.kd and own.effort_limit == made.effort_limit


def test_self_collisions_never_fire_the_contact_sensors():
    """The example robot self-collides; only contacts with the floor reach the termination sensors."""
    rb = build(_example_spec())
    m = rb.model
    d = mujoco.MjData(m)
    d.qpos[2] = 1.0  # high in the air
    fl_thigh, fr_thigh = m.body("FL_thigh").id, m.body("FR_thigh").id
    # place the two front thigh capsules through each other: a self-contact, no floor anywhere near
    d.qpos[m.joint("FL_hip_joint").qposadr[0]] = -0.9
    d.qpos[m.joint("FR_hip_joint").qposadr[0]] = 0.9
    mujoco.mj_forward(m, d)
    pairs = {(m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]) for c in d.contact[:d.ncon]}
    assert d.ncon > 0 and any({a, b} & {fl_thigh, fr_thigh} for a, b in pairs)
    assert (d.sensordata[list(rb.termination_force_adr)] == 0).all()
    assert all(m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0 for g in range(m.ngeom) if m.geom_group[g] == 2)


def _example_spec():
    import importlib.util

    spec = importlib.util.spec_from_file_location("my_robot_example", EXAMPLE_DIR / "my_robot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MY_ROBOT


def test_list_tasks_shows_builtin_tasks(capsys):
    assert train.main(["--list-tasks"]) == 0
    assert "quadruped-flat" in capsys.readouterr().out


def test_visual_groups_never_collide():
    """Geoms of a visual group lose their collision flags even where the file sets them."""
    spec = _example_spec()
    collision_group = dataclasses.replace(spec, visual_groups=(3,), termination_contacts=(), penalized_contacts=(),
                                          foot_geoms=(), foot_bodies=())
    with pytest.raises(UserError, match="foot_geoms / foot_bodies"):
        build(collision_group)  # a robot needs feet
    rb = build(dataclasses.replace(spec, visual_groups=(2,)))
    m = rb.model
    assert all(m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0 for g in range(m.ngeom) if m.geom_group[g] == 2)
    assert sum(1 for g in range(m.ngeom) if m.geom_group[g] == 3 and m.geom_contype[g]) == 13


def test_a_robot_file_trains_and_plays_without_editing_the_project(tmp_path, monkeypatch, capsys):
    """``--task examples/my_robot/my_robot.py:flat`` from the repository root: train one tiny iteration, then
    play.py finds the task again from the checkpoint's task string (the file path) and exports it."""
    import play

    monkeypatch.chdir(ROOT)
    run = tmp_path / "run"
    task = "examples/my_robot/my_robot.py:flat"
    assert train.main(["--task", task, "--num-envs", "8", "--max-iterations", "1", "--run-dir", str(run), "--quiet",
                       "runner.num_steps_per_env=8", "algorithm.num_mini_batches=2"]) == 0
    onnx_file = tmp_path / "p.onnx"
    assert play.main(["--checkpoint", str(run), "--episodes", "0", "--export-onnx", str(onnx_file)]) == 0
    assert _onnx_metadata(onnx_file)["task"] == task
    capsys.readouterr()
    assert train.main(["--list-tasks"]) == 0
    assert task in capsys.readouterr().out  # loaded this session: listed with the built-in tasks


def _onnx_metadata(path: Path) -> dict:
    from deploy.onnx_policy import OnnxPolicy

    return OnnxPolicy(path).metadata
