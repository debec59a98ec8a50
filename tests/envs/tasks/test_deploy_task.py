"""A deployable task for every robot (issue 45): ``menagerie:NAME[@ENTRY]:deploy`` and ``path/to/robot.py:deploy``
on the served Unitree-style test models (tests/menagerie_models.py): the policy observes only what a low state
carries, with the hardware randomization and the robot's gains; its ONNX export passes ``deploy.unitree``'s checks
and maps onto the Unitree profile; a short rehearsal over DDS runs on the policy's own model."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import configs.menagerie as menagerie_config
from configs.catalog import get_task
from configs.drafted import BIPED_DEPLOY_ITERATIONS, BIPED_ITERATIONS
from configs.locomotion import DEPLOY_GAINS, HARDWARE
from contract.errors import UserError
from envs.robot_check.verdict import robot_of
from envs.robots.draft import draft
from envs.robots.menagerie import files_digest, parse, xml_path
from tests.menagerie_models import menagerie_root

pytest.importorskip("mujoco_menagerie")
ROOT = Path(__file__).resolve().parents[3]
GO2, G1 = "menagerie:unitree_go2:deploy", "menagerie:unitree_g1@g1_mjlab:deploy"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """MENAGERIE_ROOT at a folder of the test models, the fix cache in tmp_path holding the draft's own settings
    (the plumbing tested without the search), no Menagerie task resolved yet."""
    from envs import registry

    for name in [n for n in registry.registered_so_far() if n.startswith("menagerie:")]:
        monkeypatch.delitem(registry._REGISTRY, name)
    root = menagerie_root(tmp_path / "menagerie")
    monkeypatch.setenv("MENAGERIE_ROOT", str(root))
    monkeypatch.setenv("LEGGED_MJX_CACHE", str(tmp_path / "cache"))
    for task in (GO2, G1):
        ref = parse(task)
        spec = draft(xml_path(ref), ref.robot_id.replace("@", "_")).spec
        version = menagerie_config.FIX_VERSION
        path = menagerie_config.cache_dir() / f"{ref.robot_id}-{files_digest(ref)[:16]}-v{version}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"actuators": [dataclasses.asdict(g) for g in spec.actuators],
                                    "sim": dataclasses.asdict(spec.sim), "verdict": "OK", "changes": [],
                                    "seconds": 0}))
    return root


def _is_deployable(env) -> None:  # noqa: ANN001 - a LocomotionEnvConfig
    rnd = env.randomization
    assert "base_lin_vel" in env.policy_exclude and env.obs_history == 5 and not env.height_scan.enabled
    assert rnd.motor_strength == HARDWARE.motor_strength == (0.8, 1.2) and rnd.action_delay == (0, 2)
    assert (rnd.kp_scale, rnd.kd_scale) == (DEPLOY_GAINS.kp_scale, DEPLOY_GAINS.kd_scale) != ((1.0, 1.0), (1.0, 1.0))
    assert rnd.friction[0] < 1 < rnd.friction[1] and rnd.added_base_mass[0] < 0 < rnd.added_base_mass[1]
    assert rnd.gain_scale[0] < 1 < rnd.gain_scale[1]


def test_the_deploy_task_of_a_go2_and_a_g1_by_name(served):
    for name, flat, biped in ((GO2, "menagerie:unitree_go2", False), (G1, "menagerie:unitree_g1@g1_mjlab", True)):
        task = get_task(name)
        env = task.default_config().env
        _is_deployable(env)
        flat_env = get_task(flat).default_config().env
        assert "base_lin_vel" not in flat_env.policy_exclude and flat_env.obs_history == 1
        assert flat_env.randomization.kp_scale == (1.0, 1.0)  # the flat task unchanged
        # the robot's gains are the flat task's: the draft with the --fix settings
        assert robot_of(task).spec == robot_of(get_task(flat)).spec
        # a biped keeps the humanoid settings the draft picks (biped rewards, base-height end, smaller push)
        assert (env.rewards.feet_air_time_biped > 0) == biped and (env.min_base_height > 0) == biped
        assert env.randomization.push_vel_xy == (0.5 if biped else 1.0)
        assert env.rewards == flat_env.rewards and env.commands == flat_env.commands
        # a biped's deploy task trains longer than its flat task (configs/drafted.py); a quadruped's the same
        iterations = task.default_config().runner.max_iterations, get_task(flat).default_config().runner.max_iterations
        assert iterations == ((BIPED_DEPLOY_ITERATIONS, BIPED_ITERATIONS) if biped else (iterations[1], iterations[1]))


def test_a_robot_file_without_a_deploy_task_and_the_errors(served, tmp_path):
    out = tmp_path / "go2.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "tools.new_robot", "menagerie:unitree_go2", "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    task = get_task(f"{out}:deploy")
    _is_deployable(task.default_config().env)
    assert robot_of(task).spec == robot_of(get_task(f"{out}:flat")).spec
    two = tmp_path / "two.py"
    two.write_text(out.read_text() + "\nimport dataclasses\nOTHER = dataclasses.replace(" + _spec_var(out)
                   + ", name='other')\n")
    with pytest.raises(UserError, match=r"has no task 'deploy' and 2 robot specs"):
        get_task(f"{two}:deploy")
    with pytest.raises(UserError, match=r"'walk' is not a task of a Menagerie robot; allowed: flat, rough, track, "
                                        r"deploy"):
        get_task("menagerie:unitree_go2:walk")


def _spec_var(path: Path) -> str:
    """The name of the RobotSpec a drafted file defines."""
    line = next(ln for ln in path.read_text().splitlines() if "= RobotSpec(" in ln)
    return line.split("=")[0].strip()


def _trained_export(task: str, run: Path, onnx_file: Path) -> dict:
    import play
    import train
    from deploy.onnx_policy import OnnxPolicy

    assert train.main(["--task", task, "--seed", "1", "--num-envs", "16", "--max-iterations", "2",
                       "--run-dir", str(run), "--quiet"]) == 0
    assert play.main(["--checkpoint", str(run), "--episodes", "0", "--export-onnx", str(onnx_file)]) == 0
    return OnnxPolicy(onnx_file).metadata


def _unitree_check(meta: dict, robot: str) -> None:
    """``python -m deploy.unitree``'s checks before DDS starts, and the profile's slot for every driven joint."""
    from deploy.unitree.__main__ import _check
    from deploy.unitree.profiles import driven_joints, for_policy

    args = argparse.Namespace(domain=0, seconds=10.0, pose_seconds=3.0, connect_timeout=2.0, rt_priority=0,
                              base_velocity=False, interface="lo", robot=None)
    profile = _check(args, meta)
    assert profile.name == robot and for_policy(meta, None).name == robot
    assert all(n in profile.slot_of for n in driven_joints(meta))
    assert "base_lin_vel" not in [n for n, _ in meta["obs_layout"]]


def test_the_go2_export_passes_the_unitree_checks(served, tmp_path):
    """A 2-iteration policy: ``deploy.unitree``'s checks pass and every joint has the profile's slot."""
    meta = _trained_export(GO2, tmp_path / "run", tmp_path / "go2.onnx")
    assert meta["task"] == GO2 and "scene_mjb" in meta and len(meta["joint_names"]) == 12
    _unitree_check(meta, "unitree_go2")


def test_the_makers_file_as_the_rehearsals_robot(served, tmp_path):
    """``deploy.rehearse --model FILE.xml``: the maker's file (no floor, an unnamed free joint, the G1's without
    actuators) gets a floor, the policy's base joint name, a motor per joint and the termination sensors; a file
    without the policy's joints is one line."""
    import mujoco

    from deploy.maker_model import FLOOR, maker_scene
    from envs.scenes.assemble import build

    for task, file in ((GO2, served / "unitree_go2" / "go2.xml"), (G1, served / "unitree_g1" / "g1_mjlab.xml")):
        rb = build(robot_of(get_task(task)).spec)
        meta = {"base_joint": "root", "joint_names": list(rb.joint_names), "held_joint_names":
                list(rb.held_joint_names), "termination_contact_sensors": list(rb.termination_sensors)}
        m = maker_scene(str(file), meta, rb.model)
        assert m.joint("root").type == mujoco.mjtJoint.mjJNT_FREE and m.geom(FLOOR).type == mujoco.mjtGeom.mjGEOM_PLANE
        driven = {m.joint(int(m.actuator_trnid[a, 0])).name for a in range(m.nu)}
        assert set(meta["joint_names"]) <= driven and rb.termination_sensors
        assert all(m.sensor(n).type == mujoco.mjtSensor.mjSENS_CONTACT for n in rb.termination_sensors)
        assert m.opt.timestep == mujoco.MjModel.from_xml_path(str(file)).opt.timestep  # the file's own settings
    with pytest.raises(UserError, match=r"^--model .*g1_mjlab.xml: no joint\(s\) FL_hip_joint of the policy; the "
                                        r"file's joints: left_"):
        maker_scene(str(served / "unitree_g1" / "g1_mjlab.xml"), {**meta, "joint_names": ["FL_hip_joint"]}, rb.model)
    with pytest.raises(UserError, match=r"^--model nothing.xml: no such file"):
        maker_scene("nothing.xml", meta, rb.model)


@pytest.mark.slow
def test_a_rehearsal_over_dds_on_the_policys_own_model(served, tmp_path):
    """A 2-iteration policy (no walking expected) rehearsed over Unitree's DDS: the simulated robot is the scene in
    the policy file (the served model's folder is gone), its joints in the profile's slots, checksums right."""
    pytest.importorskip("cyclonedds", reason="cyclonedds is not installed (pip install -e '.[unitree]')")
    import shutil

    onnx_file, maker = tmp_path / "go2.onnx", tmp_path / "go2.xml"
    _trained_export(GO2, tmp_path / "run", onnx_file)
    shutil.copy(served / "unitree_go2" / "go2.xml", maker)
    shutil.rmtree(served)
    for model, out in (([], "own"), (["--model", str(maker)], "maker")):
        robot = _rehearsed(onnx_file, tmp_path / out, model, GO2)
        assert robot["profile"] == "unitree_go2"


def _rehearsed(onnx_file: Path, out: Path, model: list[str], task: str) -> dict:
    """The simulated robot's report of a 4 s ``deploy.rehearse --transport unitree-dds`` run (a trained policy's
    walking is not asked: a 2-iteration one falls, and the runtime e-stops it)."""
    from deploy.unitree.dds import loopback_config

    env = {**os.environ, "CYCLONEDDS_URI": loopback_config()}
    proc = subprocess.run([sys.executable, "-m", "deploy.rehearse", str(onnx_file), "--transport", "unitree-dds",
                           "--quick", "--latencies", "0", "--seconds", "4", "--out", str(out), *model],
                          cwd=ROOT, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "rehearsal.json").read_text())
    robot = result["settings"][0]["robot"]
    assert result["task"] == task and robot["bad_crc"] == 0 and robot.get("wrong_mode_machine", 0) == 0
    assert robot["commands_applied"] > 20 and robot["states_sent"] > 200, robot  # a loaded 2-core machine
    assert result["model"] == (model[1] if model else "the policy file's scene")
    return robot


@pytest.mark.slow
def test_the_g1_export_passes_the_unitree_checks_and_rehearses_on_the_makers_file(served, tmp_path):
    """The G1-style model (29 joints: 12 trained, the rest held or welded): ``deploy.unitree``'s checks and slots;
    the rehearsal over unitree_hg messages on the file the policy was drafted from (no actuators in it)."""
    pytest.importorskip("cyclonedds", reason="cyclonedds is not installed (pip install -e '.[unitree]')")
    onnx_file = tmp_path / "g1.onnx"
    meta = _trained_export(G1, tmp_path / "run", onnx_file)
    assert len(meta["joint_names"]) + len(meta.get("held_joint_names", [])) >= 20
    _unitree_check(meta, "unitree_g1")
    maker = served / "unitree_g1" / "g1_mjlab.xml"
    assert _rehearsed(onnx_file, tmp_path / "maker", ["--model", str(maker)], G1)["profile"] == "unitree_g1"
