"""The three Menagerie-style example robots of issue 25 (``examples/anymal_like``, ``examples/go_like``,
``examples/h1_like``): each robot file loads and resolves against its own MJCF (feet on unnamed geoms, mirror from
the LF/RF/LH/RH, FL/FR/RL/RR or left_/right_ names, held and welded joints, armature from the spec), the robot
check calls it OK or WARN (its JSON too), and the env steps without divergence; a slow test per example trains
briefly with a fixed seed, exports the policy and runs sim2sim from the ONNX file alone."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mujoco
import pytest
import torch

from configs.catalog import get_task
from envs.robot_check import verdict
from envs.robots.sides import twins
from envs.tasks.locomotion import LocomotionEnv
from rl_core.env_api import Symmetric

ROOT = Path(__file__).resolve().parents[3]
ANYMAL_LIKE = f"{ROOT / 'examples' / 'anymal_like' / 'anymal_like.py'}:flat"
GO_LIKE = f"{ROOT / 'examples' / 'go_like' / 'go_like.py'}:flat"
H1_LIKE = f"{ROOT / 'examples' / 'h1_like' / 'h1_like.py'}:flat"
EXAMPLES = (ANYMAL_LIKE, GO_LIKE, H1_LIKE)
IDS = ("anymal_like", "go_like", "h1_like")
LEGS = {ANYMAL_LIKE: ("LF", "RF", "LH", "RH"), GO_LIKE: ("FR", "FL", "RR", "RL")}
"""Leg prefixes in each quadruped example's policy order."""


def _env(task: str, num_envs: int = 4) -> LocomotionEnv:
    spec = get_task(task)
    cfg = spec.default_config().env
    assert spec.validate is not None
    spec.validate(cfg)  # the spec resolved against its MJCF, as train.py does first
    env = spec.make_env(type(cfg)(**{**cfg.__dict__, "num_envs": num_envs, "backend": "native"}), torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env


def _collision_geoms(m: mujoco.MjModel, body: str) -> list[int]:
    b = m.body(body).id
    return [g for g in range(m.ngeom) if m.geom_bodyid[g] == b and (m.geom_contype[g] or m.geom_conaffinity[g])]


def test_anymal_like_feet_are_the_shanks_unnamed_geoms_and_its_own_actuators_drive_it():
    env = _env(ANYMAL_LIKE)
    rb = env.robot
    assert rb.foot_names == ("LF_SHANK", "RF_SHANK", "LH_SHANK", "RH_SHANK")
    m = rb.model
    own = mujoco.MjModel.from_xml_path(str(ROOT / "examples" / "anymal_like" / "anymal_like.xml"))
    for foot in rb.foot_names:
        geoms = _collision_geoms(own, foot)  # in the file: four per shank, none named
        assert len(geoms) == 4 and all(own.geom(g).name == "" for g in geoms), foot
        assert len(_collision_geoms(m, foot)) == 4
    assert rb.joint_names == tuple(f"{leg}_{j}" for leg in LEGS[ANYMAL_LIKE] for j in ("HAA", "HFE", "KFE"))
    assert m.nkey == 0  # the file's keyframe is dropped
    # actuators="file": the file's position actuators (kp 100, kv 3, 80 N m) are the servos
    assert sorted(m.actuator(i).name for i in range(m.nu)) == sorted(f"{j}_act" for j in rb.joint_names)
    assert all(m.actuator_gainprm[i, 0] == 100.0 and m.actuator_forcerange[i, 1] == 80.0 for i in range(m.nu))
    mass = sum(m.body_mass[b] for b in range(m.nbody) if m.body_rootid[b] == m.body("base").id)
    assert 45.0 < mass < 55.0, mass


def test_go_like_keeps_its_files_joint_damping_and_soft_feet_under_the_task_servos():
    env = _env(GO_LIKE)
    rb = env.robot
    m = rb.model
    assert rb.foot_names == ("FR", "FL", "RR", "RL")
    assert rb.joint_names == tuple(f"{leg}_{j}_joint" for leg in LEGS[GO_LIKE] for j in ("hip", "thigh", "calf"))
    for j in rb.joint_names:  # the file's joint properties, kept (the groups set none)
        dof = m.joint(j).dofadr[0]
        assert (m.dof_damping[dof], m.dof_frictionloss[dof], m.dof_armature[dof]) == pytest.approx((2.0, 0.2, 0.01))
    for foot in rb.foot_names:  # the soft contacts of the file's foot spheres
        assert tuple(m.geom(foot).solimp[:3]) == pytest.approx((0.015, 1.0, 0.03))
    assert m.opt.impratio == 1.0 and m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL  # the check's cone, impratio 1
    assert (m.opt.iterations, m.opt.ls_iterations) == (20, 20)
    mass = sum(m.body_mass[b] for b in range(m.nbody) if m.body_rootid[b] == m.body("base").id)
    assert 13.0 < mass < 17.0, mass


def test_h1_like_trains_its_legs_holds_its_torso_and_arms_welds_its_wrists_with_the_specs_armature():
    env = _env(H1_LIKE)
    rb = env.robot
    m = rb.model
    own = mujoco.MjModel.from_xml_path(str(ROOT / "examples" / "h1_like" / "h1_like.xml"))
    assert own.njnt - 1 == 23 and not own.dof_armature.any()  # 23 joints besides the free one, no armature
    legs = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
    assert rb.joint_names == tuple(f"{s}_{j}_joint" for s in ("left", "right") for j in legs)
    arms = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow")
    assert set(rb.held_joint_names) == {"torso_joint"} | {f"{s}_{j}_joint" for s in ("left", "right") for j in arms}
    assert rb.welded_joint_names == ("left_wrist_roll_joint", "right_wrist_roll_joint")
    assert m.njnt - 1 == 21 and m.nu == 21  # the wrists are gone; a servo on every trained and held joint
    held = dict(zip(rb.held_joint_names, rb.held_joint_pos, strict=True))
    assert held["left_elbow_joint"] == held["right_elbow_joint"] == 0.8 and held["torso_joint"] == 0.0
    assert env.action_spec.n == 12
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST and own.opt.integrator == 0  # file: Euler
    for j in rb.joint_names + rb.held_joint_names:  # armature and damping from the spec's actuator groups
        dof = m.joint(j).dofadr[0]
        assert m.dof_armature[dof] == pytest.approx(0.01 if ("ankle" in j or "shoulder" in j or "elbow" in j)
                                                    else 0.02), j
        assert m.dof_damping[dof] == pytest.approx(0.3), j
    assert rb.foot_names == ("left_ankle_roll_link", "right_ankle_roll_link")
    for foot in rb.foot_names:  # three unnamed capsules per foot in the file
        geoms = _collision_geoms(own, foot)
        assert len(geoms) == 3 and all(own.geom(g).name == "" and own.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
                                       for g in geoms), foot


def test_the_checks_solver_trials_start_from_the_tasks_resets(capfd):
    """go_like at 4 / 6 iterations (pyramidal, the file's impratio 100, which the spec used to keep) is stable
    standing still but diverges from the task's reset spread (joints at 0.5-1.5 x the default pose): the check's
    solver trials now start there, so they no longer call 4 / 6 stable. The divergence it provokes prints none of
    MuJoCo's warnings inside the check."""
    from envs.robot_check.rollouts import ResetSpread, solver_trial
    from envs.robot_check.trials import quiet_mujoco_warnings

    task = get_task(GO_LIKE)
    robot = verdict.robot_of(task)
    rnd = verdict.env_config(task).randomization
    spread = ResetSpread(rnd.init_joint_scale, rnd.init_base_vel)
    high = {"impratio": 100.0, "rollouts": 16}
    assert solver_trial(robot, 4, 6, "pyramidal", **high).diverged == 0.0
    with quiet_mujoco_warnings():
        assert solver_trial(robot, 4, 6, "pyramidal", spread=spread, **high).diverged > 0.0
        assert solver_trial(robot, 20, 20, "pyramidal", spread=spread, **high).diverged == 0.0
    assert "WARNING" not in "".join(capfd.readouterr())
    assert solver_trial(robot, 2, 4, "pyramidal", spread=spread, **high).diverged > 0.0
    assert "Nan, Inf or huge value" in "".join(capfd.readouterr())  # outside the check, MuJoCo prints them


@pytest.mark.parametrize("task", EXAMPLES, ids=IDS)
def test_the_mirror_comes_from_the_joint_names(task):
    env = _env(task)
    assert isinstance(env, Symmetric)
    names = env.robot.joint_names
    swap = {"L": "R", "R": "L"}
    for name, twin in zip(names, twins(names), strict=True):
        if task == H1_LIKE:
            side, other = ("left", "right") if name.startswith("left") else ("right", "left")
            assert twin == other + name[len(side):], (name, twin)
            continue
        leg = name[:2]
        twin_leg = swap[leg[0]] + leg[1] if task == ANYMAL_LIKE else leg[0] + swap[leg[1]]
        assert twin == twin_leg + name[2:], (name, twin)
    obs = torch.randn(3, env.obs_dims["policy"])
    actions = torch.randn(3, env.action_spec.n)
    assert torch.equal(env.mirror_obs(env.mirror_obs(obs)), obs)
    assert torch.equal(env.mirror_actions(env.mirror_actions(actions)), actions)


@pytest.mark.parametrize("task", EXAMPLES, ids=IDS)
def test_the_robot_check_calls_it_ok_and_the_env_steps_without_divergence(task, tmp_path):
    report = verdict.check(get_task(task), rollouts=256)
    assert report["verdict"] in ("OK", "WARN"), verdict.render(report)
    assert not report["problems"], report["problems"]
    assert report["standing"]["diverged_at"] is None and report["standing"]["contacts"] == {}
    assert report["solver"]["random_actions"]["diverged"] == 0.0
    assert f"({report['robot']}): OK" in verdict.render(report).splitlines()[0]
    assert json.loads(json.dumps(report))["verdict"] == report["verdict"]  # what the tool's --json writes
    env = _env(task, num_envs=8)
    env.reset()
    torch.manual_seed(0)
    for _ in range(10):
        _, reward, _, _, info = env.step(0.5 * torch.randn(8, env.action_spec.n))
        assert not bool(info["invalid"].any()) and bool(torch.isfinite(reward).all())


@pytest.mark.slow
@pytest.mark.parametrize("task", EXAMPLES, ids=IDS)
def test_the_example_trains_briefly_exports_and_runs_sim2sim_from_the_onnx_file(task, tmp_path):
    """Three iterations with seed 1 on 128 envs: finite losses, no divergence, a checkpoint; play.py evaluates it,
    exports the ONNX file, and sim2sim runs from that file alone."""
    import play
    import train

    run, onnx_file, report = tmp_path / "run", tmp_path / "policy.onnx", tmp_path / "eval.json"
    assert train.main(["--task", task, "--seed", "1", "--num-envs", "128", "--max-iterations", "3",
                       "--run-dir", str(run), "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["iterations"] == 3 and summary["env_steps"] == 3 * 128 * 24, summary
    assert math.isfinite(summary["mean_episode_return"]) and summary["episodes_in_mean"] > 0, summary
    assert (run / "checkpoints" / "model_3.pt").is_file()
    assert play.main(["--checkpoint", str(run), "--episodes", "4", "--export-onnx", str(onnx_file),
                      "--json", str(report)]) == 0
    assert play.main(["--sim2sim", str(onnx_file), "--episodes", "1"]) == 0
    from deploy.onnx_policy import OnnxPolicy

    meta = OnnxPolicy(onnx_file).metadata
    assert tuple(meta["joint_names"]) == _env(task).robot.joint_names
