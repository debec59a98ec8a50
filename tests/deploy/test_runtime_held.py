"""The robot-side runtime drives a policy's held joints (issue 25 / 31): a biped written here (tests/robot_models.py)
whose waist and arms are held and wrists held at another group's gains, exported; its ``held_kp`` / ``held_kd`` /
``held_torque_limits`` come from the compiled scene's servos; the runtime holds those joints at their pose with their
gains in every safety mode, the simulated robot of the rehearsal takes their commands like any joint, a file of the
previous minor that holds joints without their gains is refused in one line, and a policy without held joints gets
the same command, byte for byte, as before."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch

from contract import schema
from contract.errors import UserError
from contract.policy_format import FORMAT
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.controller import Controller
from deploy.runtime.robot import RobotState
from deploy.runtime.safety import SafetyConfig
from deploy.sim2sim import load_scene
from deploy.simrobot import SimRobotConfig, SimulatedRobot, robot_joints
from envs.robots.spec import FILE_ACTUATORS, HeldJoints, RobotSpec
from envs.scenes.assemble import build
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig, NoiseConfig
from envs.tasks.locomotion.export import held_servos
from rl_core.config import PolicyConfig
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from tests.deploy.test_runtime_safety import POLICY as QUADRUPED_POLICY
from tests.deploy.test_runtime_safety import with_metadata
from tests.robot_models import BIPED_ARMS, BIPED_LEGS, biped_spec, humanoid_xml, write

LEGS, ARMS = BIPED_LEGS, BIPED_ARMS
HELD = ("waist_yaw_joint", "left_shoulder_pitch_joint", "left_elbow_joint", "right_shoulder_pitch_joint",
        "right_elbow_joint", "left_wrist_joint", "right_wrist_joint")
HELD_KP, HELD_KD, HELD_TORQUE = [100.0] * 5 + [5.0] * 2, [2.0] * 5 + [0.1] * 2, [60.0] * 5 + [5.0] * 2
"""The arm group's servo on the waist, shoulders and elbows, the wrist group's on the wrists."""
NO_HELD_SHA256 = "5dece5cbd3b2eb1509e750ef8a45c60a52cd4c04942d53c07866f7f22537d37a"
"""Changed on purpose once: the joint ranges widened by torque_limit / kp (deploy/runtime/safety.py)."""
"""``_no_held_commands`` computed by the runtime before it drove held joints (main at 5774532)."""


def biped(tmp_path, **fields) -> RobotSpec:
    """The tests' biped with its wrists held at -0.1 rad (a pose other than zero)."""
    held = (HeldJoints(ARMS, pose={"waist_yaw_joint": 0.0, ".*_shoulder_pitch_joint": 0.2, ".*_elbow_joint": 0.5}),
            HeldJoints(".*_wrist_joint", pose=-0.1))
    return biped_spec(tmp_path, **{"held": held, **fields})


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A random policy of the biped, exported."""
    tmp = tmp_path_factory.mktemp("held")
    cfg = LocomotionEnvConfig(num_envs=1, backend="native", physics_threads=1, noise=NoiseConfig(scale=0.0))
    env = LocomotionEnv(cfg.for_evaluation(), biped(tmp))
    torch.manual_seed(0)
    policy = ActorCritic(env.obs_dims["policy"], None, env.action_spec, PolicyConfig()).eval()
    path = tmp / "policy.onnx"
    export_onnx(policy, path, policy_metadata("biped-flat", 1, policy, env.export_metadata()))
    return path, OnnxPolicy(path).metadata


def state_of(meta, order, pos=None, stamp=0.0) -> RobotState:
    """Standing still, upright, joints in ``order`` at ``pos`` (name -> rad; default and held pose otherwise)."""
    q = dict(zip(meta["joint_names"] + meta["held_joint_names"], meta["default_joint_pos"] + meta["held_joint_pos"],
                 strict=True))
    q.update(pos or {})
    return RobotState(stamp, np.array([q.get(j, 0.3) for j in order]), np.zeros(len(order)),
                      np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), np.zeros(3))


# ------------------------------------------------------------------------------------------------------ export
def test_held_servos_are_exported_from_the_compiled_scene(exported):
    _, meta = exported
    assert meta["format"] == FORMAT == "legged-mjx-policy/2.4" and schema.problems(meta) == []
    assert tuple(meta["held_joint_names"]) == HELD
    assert meta["held_kp"] == HELD_KP and meta["held_kd"] == pytest.approx(HELD_KD)
    assert meta["held_torque_limits"] == HELD_TORQUE
    scene = load_scene(meta)  # the servos of the scene the file carries
    for name, kp, kd in zip(HELD, meta["held_kp"], meta["held_kd"], strict=True):
        a = next(a for a in range(scene.nu) if scene.actuator_trnid[a, 0] == scene.joint(name).id)
        assert (scene.actuator_gainprm[a, 0], -scene.actuator_biasprm[a, 2]) == pytest.approx((kp, kd))


def test_held_servos_of_the_files_own_actuators(tmp_path):
    """``actuators="file"``: the file's position actuators (kp 150, kv 4, force range 150) on the held joints."""
    rb = build(biped(tmp_path, mjcf=write(tmp_path, "f.xml", humanoid_xml(file_actuators=True)),
                     actuators=FILE_ACTUATORS))
    out = held_servos(rb)
    assert out == {"held_kp": [150.0] * 7, "held_kd": [4.0] * 7, "held_torque_limits": [150.0] * 7}
    pose = {**dict(biped(tmp_path).default_pose), "waist_yaw_joint|.*_(shoulder_pitch|elbow|wrist)_joint": 0.0}
    all_trained = biped(tmp_path, held=(), joints=LEGS + HELD, default_pose=pose)
    assert held_servos(build(all_trained)) == {"held_kp": [], "held_kd": [], "held_torque_limits": []}


# ----------------------------------------------------------------------------------------------------- runtime
def _robot_order(meta) -> list[str]:
    """The robot's SDK order: every joint reversed, and a spare joint the policy neither trains nor holds."""
    return ["spare_joint", *reversed(robot_joints(meta))]


def test_the_runtime_holds_the_held_joints_in_every_mode(exported):
    path, meta = exported
    order = _robot_order(meta)
    ctl = Controller(OnnxPolicy(path), order)
    held = [order.index(j) for j in HELD]
    pose = np.array(meta["held_joint_pos"])
    cfg = SafetyConfig()
    cmd = ctl.tick(state_of(meta, order), 0.0, np.zeros(3))
    assert ctl.safety.mode == "run" and cmd is not None
    np.testing.assert_array_equal(cmd.target[held], pose)
    np.testing.assert_array_equal(cmd.kp[held], HELD_KP)
    np.testing.assert_array_equal(cmd.kd[held], HELD_KD)
    assert (cmd.target[0], cmd.kp[0], cmd.kd[0]) == (0.3, 0.0, 0.0)  # the spare joint: limp
    trained = [order.index(j) for j in meta["joint_names"]]
    np.testing.assert_array_equal(cmd.kp[trained], meta["kp"])
    ctl.safety.trip("stance", "test")
    cmd = ctl.tick(state_of(meta, order, {"left_elbow_joint": 0.45}, stamp=0.02), 0.02, np.zeros(3))
    assert ctl.safety.mode == "stance"
    np.testing.assert_array_equal(cmd.target[held], pose)
    np.testing.assert_array_equal(cmd.kp[held], HELD_KP)
    np.testing.assert_allclose(cmd.kd[held], cfg.stance_kd_scale * np.array(HELD_KD))
    ctl.safety.trip("estop", "test")
    cmd = ctl.tick(state_of(meta, order, stamp=0.04), 0.04, np.zeros(3))
    assert ctl.safety.mode == "estop"
    np.testing.assert_array_equal(cmd.kp[held], 0.0)
    np.testing.assert_allclose(cmd.kd[held], cfg.estop_kd_scale * np.array(HELD_KD))
    np.testing.assert_array_equal(cmd.kp[trained], 0.0)
    assert (cmd.kp[0], cmd.kd[0]) == (0.0, 0.0)


def test_held_targets_walk_to_their_pose_at_the_rate_limit(exported):
    """Starting with a shoulder 1 rad off its pose, the hold target moves from the measured position at
    ``max_target_rate`` (here 10 rad/s: 0.2 rad per 20 ms tick), as the trained joints' targets do, and keeps the
    pose once there (the joint follows its target exactly here)."""
    path, meta = exported
    order = _robot_order(meta)
    ctl = Controller(OnnxPolicy(path), order, SafetyConfig(max_target_rate=10.0))
    j = order.index("left_shoulder_pitch_joint")
    assert ctl.dt == pytest.approx(0.02)
    q, targets = 1.2, []
    for _ in range(7):
        cmd = ctl.command(state_of(meta, order, {"left_shoulder_pitch_joint": q}), np.zeros(8))
        assert cmd is not None and cmd.kp[j] == 100.0
        q = float(cmd.target[j])
        targets.append(q)
    assert targets == pytest.approx([1.0, 0.8, 0.6, 0.4, 0.2, 0.2, 0.2])
    assert ctl.safety.mode == "run" and targets[-1] == 0.2


def test_a_held_joint_the_robot_lacks_is_one_line_and_joint_map_names_it(exported):
    path, meta = exported
    order = [j for j in robot_joints(meta) if j != "right_wrist_joint"]
    with pytest.raises(UserError, match=r"the policy's held joint\(s\) right_wrist_joint are not exactly once "
                                        r"among the robot's .* name them in joint_map") as e:
        Controller(OnnxPolicy(path), order)
    assert "\n" not in str(e.value)
    renamed = [f"m{k}" for k in range(len(order) + 1)]
    joint_map = dict(zip(renamed, [*order, "right_wrist_joint"], strict=True))
    ctl = Controller(OnnxPolicy(path), renamed, joint_map=joint_map)
    cmd = ctl.command(state_of(meta, [joint_map[m] for m in renamed]), np.zeros(8))
    assert cmd is not None and cmd.kp[-1] == 5.0 and cmd.target[-1] == -0.1


def test_a_file_of_the_previous_minor_that_holds_joints_is_refused_in_one_line(exported, tmp_path):
    path, meta = exported
    old = with_metadata(tmp_path, source=path, format="legged-mjx-policy/2", held_kp=None, held_kd=None,
                        held_torque_limits=None)
    policy = OnnxPolicy(old)  # it loads (sim2sim runs it on the scene's servos)
    assert schema.problems(policy.metadata) == []
    with pytest.raises(UserError) as e:
        Controller(policy, robot_joints(meta))
    line = str(e.value)
    assert "\n" not in line and line.startswith("runtime: the policy of task 'biped-flat' holds joints outside its "
                                                "action space (waist_yaw_joint, left_shoulder_pitch_joint")
    assert ("carries no held_kp / held_kd / held_torque_limits (format 'legged-mjx-policy/2', written before "
            "legged-mjx-policy/2.1); re-export it with: python play.py --checkpoint RUN_DIR --export-onnx FILE") in line
    with pytest.raises(UserError, match="simrobot: policy file .* carries no held_kp"):
        SimulatedRobot(SimRobotConfig(policy=str(old)))
    # a 2.0 file without held joints (nor their gains) drives the trained joints as before
    plain = with_metadata(tmp_path, source=path, format="legged-mjx-policy/2", held_kp=None, held_kd=None,
                          held_torque_limits=None, held_joint_names="[]", held_joint_pos="[]")
    cmd = Controller(OnnxPolicy(plain), meta["joint_names"]).command(state_of(meta, meta["joint_names"]),
                                                                    np.zeros(8))
    assert cmd is not None and list(cmd.kp) == meta["kp"]


def _no_held_commands(path) -> tuple[str, int]:
    """sha256 of 30 commands of the quadruped's policy (no held joints): robot joints reversed after a spare one,
    random positions, velocities and actions; 12 ticks in run, 10 in stance, 8 in e-stop."""
    policy = OnnxPolicy(path)
    names = policy.metadata["joint_names"]
    ctl = Controller(policy, ["extra_joint", *reversed(names)])
    rng = np.random.default_rng(0)
    h = hashlib.sha256()
    default = np.array(policy.metadata["default_joint_pos"])
    for k in range(30):
        if k in (12, 22):
            ctl.safety.trip("stance" if k == 12 else "estop", "test")
        q = np.concatenate([[0.3], (default + rng.normal(0, 0.3, 12))[::-1]])
        s = RobotState(0.0, q, rng.normal(0, 2.0, 13), np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))
        cmd = ctl.command(s, rng.normal(0, 3.0, 12) if ctl.safety.mode == "run" else None)
        assert cmd is not None
        for x in (cmd.target, cmd.kp, cmd.kd, cmd.tau_ff):
            h.update(np.ascontiguousarray(x, dtype=np.float64).tobytes())
    return h.hexdigest(), ctl.safety.clipped


def test_a_policy_without_held_joints_gets_the_same_command_byte_for_byte():
    assert _no_held_commands(QUADRUPED_POLICY) == (NO_HELD_SHA256, 12)


# ----------------------------------------------------------------------------------------- the simulated robot
@pytest.mark.parametrize("actuation", ["torque_pd", "file"])
def test_the_simulated_robot_takes_the_held_joints_commands(exported, actuation):
    """The runtime's commands (zero actions: the default pose) drive the simulated robot, joints in sorted order:
    1 s later the arms are at their pose (limp, they would hang at about 0 rad) and the robot stands."""
    path, meta = exported
    order = tuple(sorted(robot_joints(meta)))
    robot = SimulatedRobot(SimRobotConfig(policy=str(path), actuation=actuation, sdk_order=order))
    ctl = Controller(OnnxPolicy(path), robot.joint_names)
    per_tick = round(ctl.dt / robot.dt)
    for k in range(50):
        cmd = ctl.command(robot.sample(k * ctl.dt), np.zeros(8))
        assert cmd is not None
        robot.command = cmd
        for _ in range(per_tick):
            robot.step()
    assert not robot.fallen()
    q = robot.sample(1.0).joint_pos
    held = np.array([q[order.index(j)] for j in HELD])
    np.testing.assert_allclose(held, meta["held_joint_pos"], atol=0.05)
    assert not math.isclose(meta["held_joint_pos"][2], 0.0, abs_tol=0.3)  # the elbow's pose is far from hanging


@pytest.mark.exclusive  # real-time bounds: alone under xdist (tests/parallel.py)
def test_the_rehearsal_drives_a_policy_with_held_joints_over_udp(exported):
    """The real-time rehearsal's wiring (2 s): the simulated robot's packets carry the trained and the held joints
    (sorted, as ``deploy.rehearse`` orders them) and the runtime's commands for all of them reach it. Lenient
    watchdog as in tests/deploy/test_rehearse.py (a loaded machine delays both processes)."""
    from deploy.rehearse import rehearse_one

    path, meta = exported
    sim = SimRobotConfig(policy=str(path), sdk_order=tuple(sorted(robot_joints(meta))))
    safety = SafetyConfig(max_missed_deadlines=0, max_unchanged_s=0.3, max_sample_age_s=0.5)
    row = rehearse_one(path, sim, 2.0, (0.0, 0.0, 0.0), safety)
    assert row["runtime"]["ticks"] == 100 - 5 and row["robot"]["commands_applied"] >= 90, row
