"""Robot files as they come (issue 25, part A): feet by body, actuator groups with armature / damping / friction
loss / per-joint action scales, every joint trained, held or welded, and the checks before any work. Each test
writes its own Menagerie-style model (tests/robot_models.py)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import mujoco
import numpy as np
import pytest
import torch

import train
from contract.errors import UserError
from deploy.sim2sim import PlainMujocoRobot
from envs.robots.spec import (
    FILE_ACTUATORS,
    ActuatorGroup,
    HeldJoints,
    JointProperties,
    RobotSpec,
    SimOverrides,
    WeldedJoints,
)
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig
from tests.robot_models import BIPED_ARMS, BIPED_LEGS, biped_spec, humanoid_xml, quadruped_xml, write

LEG_JOINTS, ARMS = BIPED_LEGS, BIPED_ARMS


def _quadruped(tmp_path: Path, **fields) -> RobotSpec:
    spec = RobotSpec(
        name="anyq", mjcf=write(tmp_path, "anyq.xml", quadruped_xml()), base_body="base",
        joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"), default_pose={".*_HAA": 0.0, ".*_HFE": 0.6, ".*_KFE": -1.2},
        actuators=FILE_ACTUATORS, action_scale=0.25, base_height=0.46, foot_bodies=("(LF|RF|LH|RH)_SHANK",),
        termination_contacts=("base",), penalized_contacts=(".*_THIGH",),
        sim=SimOverrides(cone="pyramidal", impratio=1.0))
    return dataclasses.replace(spec, **fields)


def _humanoid(tmp_path: Path, xml: str | None = None, **fields) -> RobotSpec:
    return biped_spec(tmp_path, xml, **fields)


def _one_line_error(spec: RobotSpec, *words: str, collisions: str = "full") -> str:
    with pytest.raises(UserError) as e:
        build(spec, SceneOptions(collisions))
    line = str(e.value)
    assert len(line.splitlines()) == 1, line
    for w in words:
        assert w in line, line
    return line


def _stand(rb, seconds: float, ctrl: np.ndarray | None = None) -> mujoco.MjData:
    """The assembled model dropped at the default pose, servos at their targets, for ``seconds``."""
    m = rb.model
    d = mujoco.MjData(m)
    d.qpos[rb.base_qpos_adr + 2] = rb.spec.base_height
    d.qpos[list(rb.joint_qpos_adr)] = rb.default_joint_pos
    d.qpos[list(rb.held_qpos_adr)] = rb.held_joint_pos
    targets = list(rb.default_joint_pos) + list(rb.held_joint_pos)
    d.ctrl[:] = [targets[i] for i in rb.ctrl_from_policy] if ctrl is None else ctrl
    for _ in range(round(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
    return d


# ------------------------------------------------------------------------------------------------ feet by body
def test_unnamed_multi_geom_feet_on_the_shanks_stand_and_touch(tmp_path):
    rb = build(_quadruped(tmp_path))
    assert rb.foot_names == ("LF_SHANK", "RF_SHANK", "LH_SHANK", "RH_SHANK")
    assert rb.model.nkey == 0  # the file's keyframe does not fit the assembled model
    # the touch site of each foot encloses all four collision geoms of its shank
    for foot in rb.foot_names:
        site = rb.model.site(f"task_{foot}_foot")
        body = rb.model.body(foot).id
        geoms = [g for g in range(rb.model.ngeom) if rb.model.geom_bodyid[g] == body]
        assert len(geoms) == 4 and site.type[0] == mujoco.mjtGeom.mjGEOM_BOX
        for g in geoms:  # the corners of each geom's bounding box, in the body frame, lie inside the site
            signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
            local = rb.model.geom_aabb[g, :3] + signs * rb.model.geom_aabb[g, 3:]
            rot = np.empty(9)
            mujoco.mju_quat2Mat(rot, rb.model.geom_quat[g])
            corners = local @ rot.reshape(3, 3).T + rb.model.geom_pos[g]
            assert np.all(np.abs(corners - site.pos) <= site.size[0:3] - 0.01), (foot, g)
    d = _stand(rb, 1.5)
    forces = d.sensordata[list(rb.foot_touch_adr)]
    assert np.all(forces > 20.0), forces  # every foot carries weight (28 kg robot, about 70 N each)
    assert forces.sum() == pytest.approx(36.0 * 9.81, rel=0.2)
    heights = d.sensordata[list(rb.foot_pos_adr)].reshape(4, 3)[:, 2]
    assert np.all(heights < 0.2) and d.qpos[rb.base_qpos_adr + 2] > 0.35


def test_foot_contact_counts_any_geom_of_the_foot_body(tmp_path):
    """Only the shank's box (not its foot sphere) touches the floor: the foot still reports contact."""
    rb = build(_quadruped(tmp_path))
    m, d = rb.model, mujoco.MjData(rb.model)
    d.qpos[rb.base_qpos_adr + 2] = 0.5
    mujoco.mj_forward(m, d)
    box = next(g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("LF_SHANK").id
               and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX)
    # lower the whole robot until the LF box is 1 mm into the floor (legs straight down: the sphere is lower,
    # so turn the shank up 90 degrees first)
    d.qpos[m.joint("LF_KFE").qposadr[0]] = -1.57
    mujoco.mj_forward(m, d)
    d.qpos[rb.base_qpos_adr + 2] -= d.geom_xpos[box][2] - 0.03 + 0.001
    mujoco.mj_forward(m, d)
    touching = {int(m.geom_bodyid[c.geom[0]]) for c in d.contact[:d.ncon]} | {
        int(m.geom_bodyid[c.geom[1]]) for c in d.contact[:d.ncon]}
    lf = rb.foot_names.index("LF_SHANK")
    assert m.body("LF_SHANK").id in touching
    assert d.sensordata[rb.foot_touch_adr[lf]] > 0.0


def test_seven_capsule_feet_by_body(tmp_path):
    rb = build(_humanoid(tmp_path))
    assert rb.foot_names == ("left_ankle_link", "right_ankle_link")
    d = _stand(rb, 0.3)
    assert np.all(d.sensordata[list(rb.foot_touch_adr)] > 10.0)


def test_a_regex_over_the_capsules_of_one_foot_says_use_foot_bodies(tmp_path):
    spec = _humanoid(tmp_path, foot_bodies=(), foot_geoms=("left_foot_.*", "right_foot_.*"))
    line = _one_line_error(spec, "field foot_geoms", "'left_foot_.*' matches 7 geoms of body 'left_ankle_link'",
                           "use foot_bodies=('left_ankle_link', ...)")
    assert line.count("left_ankle_link") == 2


def test_error_lists_name_each_candidate_once(tmp_path):
    line = _one_line_error(_quadruped(tmp_path, foot_bodies=(".*_HIP",)), "field foot_bodies",
                           "body 'LF_HIP' has no collision geom")
    listed = line.split("bodies with collision geoms: ")[1].split(", ")
    assert listed == ["base", "LF_THIGH", "LF_SHANK", "RF_THIGH", "RF_SHANK", "LH_THIGH", "LH_SHANK", "RH_THIGH",
                      "RH_SHANK"], line


# -------------------------------------------------------------------------------------------- actuator groups
def test_group_properties_are_written_onto_the_joints_and_scales_are_per_joint(tmp_path):
    groups = (ActuatorGroup(".*_HAA", kp=200.0, kd=5.0, effort_limit=100.0, armature=0.03, damping=1.5,
                            frictionloss=0.2, action_scale="effort", velocity_limit=20.0),
              ActuatorGroup(".*_(HFE|KFE)", kp=200.0, kd=5.0, effort_limit=120.0))
    rb = build(_quadruped(tmp_path, actuators=groups))
    m = rb.model
    haa, hfe = m.joint("LF_HAA").dofadr[0], m.joint("LF_HFE").dofadr[0]
    assert (m.dof_armature[haa], m.dof_damping[haa], m.dof_frictionloss[haa]) == pytest.approx((0.03, 1.5, 0.2))
    assert (m.dof_armature[hfe], m.dof_damping[hfe], m.dof_frictionloss[hfe]) == pytest.approx((0.02, 0.5, 0.0))
    assert rb.action_scale == pytest.approx((0.125, 0.25, 0.25) * 4)  # 0.25 x 40 / 80, then the spec's 0.25
    assert rb.velocity_limit[:2] == (20.0, math.inf)

    env = LocomotionEnv(LocomotionEnvConfig(num_envs=2, backend="native", physics_threads=1), rb.spec)
    env.reset(seed=0)
    env.step(torch.ones(2, 12))
    ctrl = env.physics.read().ctrl if hasattr(env.physics.read(), "ctrl") else None
    meta = env.export_metadata()
    assert meta["action_scale"] == pytest.approx([0.125, 0.25, 0.25] * 4)
    assert meta["velocity_limits"][:2] == [20.0, None]
    robot = PlainMujocoRobot(meta)
    robot.reset(0.0)
    robot.act(np.ones(12))
    expected = np.array(rb.default_joint_pos) + np.array(rb.action_scale)
    assert robot.data.ctrl[robot.actuators] == pytest.approx(expected)
    if ctrl is not None:
        assert ctrl[0] == pytest.approx(torch.tensor(expected, dtype=torch.float32))


def test_the_spec_armature_stops_a_light_limb_from_diverging(tmp_path):
    """A 10 g hand (9e-6 kg m^2 about its wrist) under a 5 N m/rad, 0.1 N m s/rad servo diverges at 5 ms steps
    under random leg actions ("Nan, Inf or huge value in QACC"); the spec's armature 0.001 fixes it."""
    def warnings(armature: float | None) -> int:
        spec = _humanoid(tmp_path)
        groups = spec.actuators[:3] + (ActuatorGroup(".*_wrist_joint", kp=5.0, kd=0.1, effort_limit=50.0,
                                                     armature=armature),)
        rb = build(dataclasses.replace(spec, actuators=groups))
        rng = np.random.default_rng(0)
        m = rb.model
        d = _stand(rb, 0.0)
        base = np.array([(list(rb.default_joint_pos) + list(rb.held_joint_pos))[i] for i in rb.ctrl_from_policy])
        for _ in range(100):
            d.ctrl[:] = base
            d.ctrl[:len(LEG_JOINTS)] += 0.25 * rng.standard_normal(len(LEG_JOINTS))
            for _ in range(4):
                mujoco.mj_step(m, d)
        return int(d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number)

    assert warnings(None) > 0
    assert warnings(0.001) == 0


# -------------------------------------------------------------------------------- trained, held, welded joints
def test_undeclared_joints_are_one_line_listing_them(tmp_path):
    _one_line_error(_humanoid(tmp_path, held=()), "field joints / held / welded",
                    "7 joints are neither trained, held nor welded: waist_yaw_joint, left_shoulder_pitch_joint, "
                    "left_elbow_joint, left_wrist_joint, right_shoulder_pitch_joint")


def test_a_joint_both_trained_and_held_is_refused(tmp_path):
    spec = _humanoid(tmp_path)
    _one_line_error(dataclasses.replace(spec, held=spec.held + (HeldJoints("left_knee_joint", 0.3),)),
                    "field held[2]: joint 'left_knee_joint' is already trained (field joints)")


def test_held_joints_stay_at_their_pose_outside_the_action_space(tmp_path):
    spec = _humanoid(tmp_path)
    env = LocomotionEnv(LocomotionEnvConfig(num_envs=4, backend="native", physics_threads=1), spec)
    assert env.action_spec.n == 8 and env.model.nu == 8 + 7
    rb = env.robot
    assert rb.held_joint_names[:5] == ("waist_yaw_joint", "left_shoulder_pitch_joint", "left_elbow_joint",
                                       "right_shoulder_pitch_joint", "right_elbow_joint")
    env.reset(seed=1)
    qpos = env.physics.read().qpos
    assert qpos[:, list(rb.held_qpos_adr)] == pytest.approx(torch.tensor(rb.held_joint_pos).expand(4, -1))
    for _ in range(20):
        env.step(torch.zeros(4, 8))
    held = env.physics.read().qpos[:, list(rb.held_qpos_adr)]
    assert torch.all((held - torch.tensor(rb.held_joint_pos)).abs() < 0.1), held
    meta = env.export_metadata()
    assert meta["held_joint_names"] == list(rb.held_joint_names)
    robot = PlainMujocoRobot(meta)
    robot.reset(0.0)
    assert robot.data.ctrl[robot.held_actuators] == pytest.approx(rb.held_joint_pos)
    assert robot.data.qpos[robot.held_qpos_adr] == pytest.approx(rb.held_joint_pos)


def test_welded_joints_are_removed_and_their_bodies_fixed_at_the_pose(tmp_path):
    spec = _humanoid(tmp_path, held=(HeldJoints(ARMS, pose=0.0),),
                     welded=(WeldedJoints(".*_wrist_joint", pose={"left_.*": 0.4, "right_.*": -0.3}),))
    spec = dataclasses.replace(spec, actuators=spec.actuators[:3])  # no wrist joints left to drive
    rb = build(spec)
    m = rb.model
    assert "left_wrist_joint" not in [m.joint(j).name for j in range(m.njnt)] and m.nu == 8 + 5
    original = mujoco.MjModel.from_xml_path(str(spec.mjcf))
    d0, d = mujoco.MjData(original), mujoco.MjData(m)
    d0.qpos[original.joint("left_wrist_joint").qposadr[0]] = 0.4
    d0.qpos[original.joint("right_wrist_joint").qposadr[0]] = -0.3
    for j in range(m.njnt):  # every remaining joint at the original's value
        name = m.joint(j).name
        n = 7 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 1
        d.qpos[m.jnt_qposadr[j]:m.jnt_qposadr[j] + n] = d0.qpos[original.joint(name).qposadr[0]:][:n]
    mujoco.mj_kinematics(original, d0)
    mujoco.mj_kinematics(m, d)
    for hand in ("left_hand", "right_hand"):
        assert d.xpos[m.body(hand).id] == pytest.approx(d0.xpos[original.body(hand).id], abs=1e-9)
        assert d.xquat[m.body(hand).id] == pytest.approx(d0.xquat[original.body(hand).id], abs=1e-9)


def test_file_actuators_on_held_joints_and_welded_ones_removed(tmp_path):
    spec = _humanoid(tmp_path, xml=humanoid_xml(file_actuators=True), actuators=FILE_ACTUATORS,
                     held=(HeldJoints(ARMS, pose=0.1),), welded=(WeldedJoints(".*_wrist_joint"),))
    rb = build(spec)
    assert rb.model.nu == 8 + 5 and rb.model.nkey == 0
    assert rb.kp == (150.0,) * 8
    assert sorted(rb.ctrl_from_policy) == list(range(13))
    d = _stand(rb, 0.3)
    assert np.all(np.isfinite(d.qpos))


def test_joint_properties_give_the_files_own_actuators_armature_and_damping(tmp_path):
    """A file with its own position actuators and no armature: ``joint_properties`` writes armature, damping and
    friction loss onto the joints it matches (the others keep the file's), without touching the servos."""
    spec = _humanoid(tmp_path, xml=humanoid_xml(file_actuators=True), actuators=FILE_ACTUATORS,
                     held=(HeldJoints(ARMS, pose=0.1),), welded=(WeldedJoints(".*_wrist_joint"),),
                     joint_properties=(JointProperties(".*_(hip_.*|knee|ankle_pitch)_joint", armature=0.03,
                                                       damping=0.5, frictionloss=0.1),
                                       JointProperties(ARMS, armature=0.01)))
    m = build(spec).model
    for j in LEG_JOINTS:
        dof = m.joint(j).dofadr[0]
        assert (m.dof_armature[dof], m.dof_damping[dof], m.dof_frictionloss[dof]) == pytest.approx((0.03, 0.5, 0.1))
    for j in ("waist_yaw_joint", "left_elbow_joint"):
        dof = m.joint(j).dofadr[0]
        assert (m.dof_armature[dof], m.dof_damping[dof]) == pytest.approx((0.01, 0.0))
    assert m.actuator_gainprm[m.actuator("left_knee_joint").id, 0] == 150.0  # the file's servo, as it is


def test_a_joint_property_set_twice_or_matching_nothing_is_one_line(tmp_path):
    spec = _humanoid(tmp_path, joint_properties=(JointProperties(".*_knee_joint", armature=0.05),))
    _one_line_error(spec, "field joint_properties[0]: armature of joint 'left_knee_joint' is set twice (also by "
                          "actuators[0]): set it in one place")
    _one_line_error(_humanoid(tmp_path, joint_properties=(JointProperties("neck_joint", damping=1.0),)),
                    "field joint_properties[0]: 'neck_joint' matches no joint")
    _one_line_error(_humanoid(tmp_path, joint_properties=(JointProperties(".*_knee_joint", damping=-1.0),)),
                    "field joint_properties[0] ('.*_knee_joint').damping: -1.0 is negative")


# ---------------------------------------------------------------------------------- checks before any work
POSE_OUT = {".*_HAA": 0.0, ".*_HFE": 0.6, ".*_KFE": 1.8}
MISTAKES = {  # case -> (spec fields, words of the one line)
    "default pose out of range": (dict(default_pose=POSE_OUT),
                                  "field default_pose: joint 'LF_KFE' at 1.8 is outside its range [-2.6, -0.3]"),
    "actuators typo": (dict(actuators="files"), "field actuators: 'files' is not allowed; allowed: 'file'"),
    "cone typo": (dict(sim=SimOverrides(cone="eliptic")),  # type: ignore[arg-type]
                  "field sim.cone: 'eliptic' is not allowed; allowed: pyramidal, elliptic or None"),
    "solver typo": (dict(sim=SimOverrides(solver="CG")),  # type: ignore[arg-type]
                    "field sim.solver: 'CG' is not allowed; allowed: newton, cg, pgs or None"),
    "zero substeps": (dict(sim=SimOverrides(substeps=0)),
                      "field sim.substeps: 0 is not allowed; allowed: an integer >= 1 or None"),
    "foot condim 2": (dict(sim=SimOverrides(foot_condim=2)),
                      "field sim.foot_condim: 2 is not allowed; allowed: 1, 3, 4, 6 or None"),
    "integrator typo": (dict(sim=SimOverrides(integrator="implicit_fast")),  # type: ignore[arg-type]
                        "field sim.integrator: 'implicit_fast' is not allowed; allowed: euler, implicitfast, implicit, "
                        "rk4 or None"),
    "negative armature": (dict(actuators=(ActuatorGroup(".*", kp=80.0, kd=2.0, effort_limit=80.0, armature=-0.01),)),
                          "field actuators[0] ('.*').armature: -0.01 is negative; allowed: >= 0"),
    "negative kd": (dict(actuators=(ActuatorGroup(".*", kp=80.0, kd=-2.0, effort_limit=80.0),)),
                    "field actuators[0] ('.*').kd: -2.0 is negative; allowed: >= 0"),
    "zero effort limit": (dict(actuators=(ActuatorGroup(".*", kp=80.0, kd=2.0, effort_limit=0.0),)),
                          "field actuators[0] ('.*').effort_limit: 0.0 is not positive; allowed: > 0"),
    "action scale typo": (dict(actuators=(ActuatorGroup(".*", kp=80.0, kd=2.0, effort_limit=80.0,
                                                        action_scale="efort"),)),  # type: ignore[arg-type]
                          "field actuators[0] ('.*').action_scale: 'efort' is not allowed; allowed: a number, "
                          "'effort'"),
    "negative damping": (dict(actuators=(ActuatorGroup(".*", kp=80.0, kd=2.0, effort_limit=80.0, damping=-1.0),)),
                         "field actuators[0] ('.*').damping: -1.0 is negative"),
}


@pytest.mark.parametrize("case", list(MISTAKES))
def test_each_mistake_is_one_line(case, tmp_path):
    fields, words = MISTAKES[case]
    _one_line_error(_quadruped(tmp_path, **fields), f"robot spec 'anyq' {words}")


def test_held_pose_out_of_range_and_collision_typo(tmp_path):
    spec = _humanoid(tmp_path)
    _one_line_error(dataclasses.replace(spec, held=(HeldJoints(ARMS, pose=2.5), spec.held[1])),
                    "field held[0].pose: joint 'waist_yaw_joint' at 2.5 is outside its range [-1, 1]")
    _one_line_error(spec, "env.collisions 'foot'", "full, feet", collisions="foot")


ROBOT_FILE = '''
from pathlib import Path
from configs.locomotion import flat_task
from envs.robots.spec import RobotSpec
ROBOT = RobotSpec(name="anyq", mjcf=Path(__file__).with_name("anyq.xml"), base_body="base",
                  joints=(".*_HAA", ".*_HFE", ".*_KFE"), default_pose={".*": 0.0}, actuators="files",
                  action_scale=0.25, base_height=0.46, foot_bodies=(".*_SHANK",))
flat = flat_task("anyq-flat", ROBOT)
'''


def test_a_typo_in_actuators_is_one_line_from_train_py(tmp_path, capsys):
    write(tmp_path, "anyq.xml", quadruped_xml())
    write(tmp_path, "anyq.py", ROBOT_FILE)
    code = train.main(["--task", f"{tmp_path / 'anyq.py'}:flat", "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    # the file's line first (envs/file_errors.py), then the field and what it allows
    assert ("anyq.py:6: robot spec 'anyq' field actuators: expected a tuple of ActuatorGroup or 'file', got 'files'"
            in err)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["mjx", "warp"])
def test_held_joints_and_box_foot_sites_on_the_other_backends(backend, tmp_path):
    """MJX and MuJoCo Warp (CPU) hold the held joints and read the feet's box touch sites as native MuJoCo does.
    Warp's own estimate of the contact buffer (mujoco_warp's default nconmax) is too small for 14 foot capsules
    plus self-collisions: every world overflows at touchdown and is reset; 64 contacts per world are enough."""
    spec = _humanoid(tmp_path)
    readings = []
    for b in ("native", backend):
        buffers = dict(warp_nconmax=64, warp_njmax=384) if b == "warp" else {}
        env = LocomotionEnv(LocomotionEnvConfig(num_envs=2, backend=b, randomize_initial_episode_length=False,
                                                **buffers), spec, torch.device("cpu"))
        env.reset(seed=1)
        for _ in range(10):
            env.step(torch.zeros(2, env.action_spec.n))
        r = env.physics.read()
        readings.append((r.qpos[:, list(env.robot.held_qpos_adr)].clone(),
                         r.sensordata[:, list(env.robot.foot_touch_adr)].clone()))
    pose = torch.tensor(spec_pose := build(spec).held_joint_pos)
    for held, feet in readings:  # float32 physics with contacts drift apart from native: compare with the pose
        assert torch.all((held - pose).abs() < 0.05), (held, spec_pose)
        assert feet.sum(1).min() > 100.0, feet  # the robot (38 kg) stands on its box-site feet


HELD_ROBOT_FILE = '''
from pathlib import Path
from configs.locomotion import flat_task
from envs.robots.spec import ActuatorGroup, HeldJoints, RobotSpec, WeldedJoints
ARMS = r"waist_yaw_joint|.*_(shoulder_pitch|elbow)_joint"
ROBOT = RobotSpec(
    name="biped", mjcf=Path(__file__).with_name("biped.xml"), base_body="pelvis",
    joints=(".*_hip_pitch_joint", ".*_hip_roll_joint", ".*_knee_joint", ".*_ankle_pitch_joint"),
    default_pose={".*_hip_pitch_joint": -0.2, ".*_hip_roll_joint": 0.0, ".*_knee_joint": 0.4,
                  ".*_ankle_pitch_joint": -0.2},
    actuators=(ActuatorGroup(".*_(hip_.*|knee)_joint", kp=150.0, kd=4.0, effort_limit=150.0, armature=0.02),
               ActuatorGroup(".*_ankle_pitch_joint", kp=80.0, kd=2.0, effort_limit=50.0, armature=0.01,
                             action_scale="effort"),
               ActuatorGroup(ARMS, kp=100.0, kd=2.0, effort_limit=60.0, armature=0.01)),
    action_scale=0.25, base_height=0.93, foot_bodies=("left_ankle_link", "right_ankle_link"),
    termination_contacts=("pelvis", "torso"),
    held=(HeldJoints(ARMS, pose={"waist_yaw_joint": 0.0, ".*_shoulder_pitch_joint": 0.2, ".*_elbow_joint": 0.5}),),
    welded=(WeldedJoints(".*_wrist_joint", pose=0.0),),
)
flat = flat_task("biped-flat", ROBOT)
'''


def test_a_robot_file_with_held_and_welded_joints_trains_exports_and_runs_sim2sim(tmp_path, capsys):
    """train.py one tiny iteration, then play.py exports the ONNX file and runs sim2sim from it alone: the held
    joints and per-joint scales travel in the metadata."""
    import play

    write(tmp_path, "biped.xml", humanoid_xml())
    write(tmp_path, "biped.py", HELD_ROBOT_FILE)
    run, onnx_file = tmp_path / "run", tmp_path / "p.onnx"
    assert train.main(["--task", f"{tmp_path / 'biped.py'}:flat", "--num-envs", "8", "--max-iterations", "1",
                       "--run-dir", str(run), "--quiet", "runner.num_steps_per_env=8",
                       "algorithm.num_mini_batches=2"]) == 0
    assert play.main(["--checkpoint", str(run), "--episodes", "0", "--export-onnx", str(onnx_file)]) == 0
    assert play.main(["--sim2sim", str(onnx_file), "--episodes", "1"]) == 0
    from deploy.onnx_policy import OnnxPolicy

    meta = OnnxPolicy(onnx_file).metadata
    assert meta["held_joint_names"][0] == "waist_yaw_joint" and len(meta["held_joint_names"]) == 5
    assert meta["action_scale"][6:] == pytest.approx([0.25 * 50.0 / 80.0] * 2) and meta["action_scale"][0] == 0.25


def test_two_welded_joints_of_one_body_compose_in_the_files_order(tmp_path):
    """The left hip body has a pitch and a roll joint: welded at 0.3 / -0.2, the thigh sits where MuJoCo's
    kinematics puts it with the joints at those angles."""
    joints = tuple(j for j in LEG_JOINTS if not j.startswith("left_hip"))
    spec = _humanoid(tmp_path, joints=joints, welded=(WeldedJoints("left_hip_(roll|pitch)_joint",
                                                                   pose={".*roll.*": -0.2, ".*pitch.*": 0.3}),))
    m = build(spec).model
    original = mujoco.MjModel.from_xml_path(str(spec.mjcf))
    d0, d = mujoco.MjData(original), mujoco.MjData(m)
    d0.qpos[original.joint("left_hip_pitch_joint").qposadr[0]] = 0.3
    d0.qpos[original.joint("left_hip_roll_joint").qposadr[0]] = -0.2
    mujoco.mj_kinematics(original, d0)
    mujoco.mj_kinematics(m, d)  # the base at the file's pose in both, every other joint at 0
    for body in ("left_thigh", "left_ankle_link"):
        assert d.xpos[m.body(body).id] == pytest.approx(d0.xpos[original.body(body).id], abs=1e-9)
        assert d.xquat[m.body(body).id] == pytest.approx(d0.xquat[original.body(body).id], abs=1e-9)
