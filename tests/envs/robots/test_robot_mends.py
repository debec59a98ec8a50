"""Issue 37's smaller mends: a foot picked among a body's unnamed collision geoms by class, type or index
(``FootGeom``); a foot body in ``termination_contacts`` / ``penalized_contacts`` is a one-line error;
``RobotSpec.action_scale`` may be None when every actuator group sets its own; the robot check prints numbers
with three significant digits and never ``-0``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mujoco
import numpy as np
import pytest

from contract.errors import UserError
from envs.robot_check.text import num, pct
from envs.robots.spec import FILE_ACTUATORS, ActuatorGroup, FootGeom, RobotSpec, SimOverrides
from envs.scenes.assemble import build
from tests.robot_models import quadruped_xml, write

ROOT = Path(__file__).resolve().parents[3]
SHANKS = "(LF|RF|LH|RH)_SHANK"


def _quadruped(tmp_path: Path, xml: str | None = None, **fields) -> RobotSpec:
    spec = RobotSpec(
        name="anyq", mjcf=write(tmp_path, "anyq.xml", xml or quadruped_xml()), base_body="base",
        joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"), default_pose={".*_HAA": 0.0, ".*_HFE": 0.6, ".*_KFE": -1.2},
        actuators=FILE_ACTUATORS, action_scale=0.25, base_height=0.46,
        foot_geoms=(FootGeom(SHANKS, type="sphere"),), termination_contacts=("base",),
        penalized_contacts=(".*_THIGH",), sim=SimOverrides(cone="pyramidal", impratio=1.0))
    return dataclasses.replace(spec, **fields)


def _error(spec: RobotSpec, *words: str) -> str:
    with pytest.raises(UserError) as e:
        build(spec)
    line = str(e.value)
    assert len(line.splitlines()) == 1, line
    for w in words:
        assert w in line, line
    return line


def _sphere(m: mujoco.MjModel, body: str) -> int:
    b = m.body(body).id
    (g,) = [g for g in range(m.ngeom) if m.geom_bodyid[g] == b and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE
            and (m.geom_contype[g] or m.geom_conaffinity[g])]
    return g


@pytest.mark.parametrize("pick", [dict(type="sphere"), dict(index=3)], ids=["type", "index"])
def test_a_foot_is_one_unnamed_geom_of_its_body_by_type_or_index(tmp_path, pick):
    rb = build(_quadruped(tmp_path, foot_geoms=(FootGeom(SHANKS, **pick),)))
    m = rb.model
    assert rb.foot_names == ("LF_SHANK", "RF_SHANK", "LH_SHANK", "RH_SHANK")  # a foot is named after its body
    for foot, geoms in zip(rb.foot_names, rb.foot_geom_ids, strict=True):
        assert geoms == (_sphere(m, foot),)  # only the foot sphere, not the shank's capsule, box and cylinder
        site = m.site(f"task_{foot}_foot")
        assert site.type[0] == mujoco.mjtGeom.mjGEOM_SPHERE  # the geom's own shape, grown by the margin
        assert np.allclose(site.pos, m.geom_pos[geoms[0]])
    # the foot's position is the sphere's centre (3 cm above the sole), not the shank's bounding box's
    d = mujoco.MjData(m)
    d.qpos[rb.base_qpos_adr + 2] = rb.spec.base_height
    d.qpos[list(rb.joint_qpos_adr)] = rb.default_joint_pos
    mujoco.mj_forward(m, d)
    for k, foot in enumerate(rb.foot_names):
        pos = d.sensordata[list(rb.foot_pos_adr[3 * k:3 * k + 3])]
        assert np.allclose(pos, d.geom_xpos[_sphere(m, foot)], atol=1e-9), foot
    by_body = build(_quadruped(tmp_path, foot_geoms=(), foot_bodies=(SHANKS,)))
    assert len(by_body.foot_geom_ids[0]) == 4  # foot_bodies: every collision geom of the shank


def test_a_foot_geom_by_its_default_class(tmp_path):
    """examples/anymal_like's shanks carry four unnamed collision geoms; the foot sphere's class is ``foot``."""
    spec = _quadruped(tmp_path, mjcf=ROOT / "examples" / "anymal_like" / "anymal_like.xml", base_height=0.62,
                      default_pose={".*_HAA": 0.0, ".F_HFE": 0.4, ".H_HFE": -0.4, ".F_KFE": -0.8, ".H_KFE": 0.8},
                      foot_geoms=(FootGeom(".._SHANK", geom_class="foot"),))
    rb = build(spec)
    for foot, geoms in zip(rb.foot_names, rb.foot_geom_ids, strict=True):
        assert geoms == (_sphere(rb.model, foot),), foot


def test_foot_geom_mistakes_are_one_line(tmp_path):
    _error(_quadruped(tmp_path, foot_geoms=(FootGeom(SHANKS, geom_class="foot"),)), "field foot_geoms[0]",
           "class 'foot' picks 0 of the 4 collision geoms of body 'LF_SHANK'", "0: anyq capsule", "3: anyq sphere")
    _error(_quadruped(tmp_path, foot_geoms=(FootGeom(SHANKS, type="sphere", index=3),)),
           "field foot_geoms[0]: give exactly one of geom_class, type or index (got type, index)")
    _error(_quadruped(tmp_path, foot_geoms=(FootGeom(SHANKS, type="ball"),)),
           "field foot_geoms[0].type: 'ball' is not allowed; allowed: plane, hfield, sphere, capsule")
    _error(_quadruped(tmp_path, foot_geoms=(FootGeom(SHANKS, index=7),)), "index 7 picks 0 of the 4")
    _error(_quadruped(tmp_path, foot_geoms=(FootGeom("FOOT", index=0),)),
           "field foot_geoms[0].body: 'FOOT' matches no body")


@pytest.mark.parametrize("field", ["termination_contacts", "penalized_contacts"])
def test_a_foot_body_among_the_contacts_is_a_one_line_error(tmp_path, field):
    """Its contacts used to be dropped without a word (every geom of a foot body is a foot geom)."""
    spec = _quadruped(tmp_path, foot_geoms=(), foot_bodies=(SHANKS,), **{field: ("base", ".*_SHANK")})
    _error(spec, f"field {field}: body 'LF_SHANK' is a foot (all its collision geoms are foot geoms)", "leave it out")
    # a shank whose foot is one of its geoms keeps its other geoms watched
    rb = build(_quadruped(tmp_path, **{field: ("base", ".*_SHANK")}))
    watched = rb.termination_sensors if field == "termination_contacts" else rb.penalized_bodies
    assert any("SHANK" in w for w in watched), watched


def test_action_scale_may_be_left_out_when_every_group_sets_its_own(tmp_path):
    groups = (ActuatorGroup(".*_HAA", kp=100.0, kd=3.0, effort_limit=80.0, action_scale=0.2),
              ActuatorGroup(".*_(HFE|KFE)", kp=100.0, kd=3.0, effort_limit=80.0, action_scale="effort"))
    base = _quadruped(tmp_path)
    spec = RobotSpec(name="anyq", mjcf=base.mjcf, base_body="base", joints=base.joints,
                     default_pose=base.default_pose, actuators=groups, base_height=0.46, foot_geoms=base.foot_geoms)
    assert spec.action_scale is None
    rb = build(spec)
    assert rb.action_scale == tuple(0.2 if j.endswith("HAA") else 0.25 * 80.0 / 100.0 for j in rb.joint_names)
    lacking = dataclasses.replace(spec, actuators=(groups[0], dataclasses.replace(groups[1], action_scale=None)))
    _error(lacking, "field action_scale: None, and actuators[1] ('.*_(HFE|KFE)') set no action_scale of their own")
    _error(dataclasses.replace(base, action_scale=None), "field action_scale: None is not allowed with "
                                                         "actuators='file'")


def test_check_numbers_have_three_significant_digits_and_no_negative_zero():
    assert [num(x) for x in (28.5012, -0.0, 0.0, 100.0, 2.0, 0.25, 1234.5, 0.000123456, 2.4e-6, float("inf"))] == [
        "28.5", "0", "0", "100", "2", "0.25", "1234", "0.000123", "2.40e-06", "inf"]
    assert (pct(0.8), pct(0.0123), pct(-0.0)) == ("80%", "1.23%", "0%")


def _go_like(**fields) -> RobotSpec:
    from envs.robots.draft import draft

    return dataclasses.replace(draft(ROOT / "examples" / "go_like" / "go_like.xml", "go").spec, **fields)


def test_file_actuators_on_torque_motors_say_they_are_motors_and_name_the_fix():
    """Issue 46, point 8: actuators='file' on a file of motors."""
    _error(_go_like(actuators=FILE_ACTUATORS), "field actuators: 'file' needs one position actuator on joint "
           "'FL_hip_joint': its actuator 'FL_hip' is a motor (torque), not a position servo; give actuators a tuple "
           "of ActuatorGroup")


def test_a_foot_geom_named_among_the_contact_bodies_is_called_a_foot_geom():
    _error(_go_like(termination_contacts=("base", "FL")), "field termination_contacts: 'FL' matches no body but the "
           "foot geom(s) FL: a foot's floor contacts are steps, not termination contacts")


def test_a_group_matching_none_of_several_joints_names_them_all():
    groups = (ActuatorGroup(".*_(hip|thigh)_joint", kp=20.0, kd=0.5, effort_limit=23.7),)
    _error(_go_like(actuators=groups), "joints 'FL_calf_joint', 'FR_calf_joint', 'RL_calf_joint', 'RR_calf_joint' "
           "are matched by no entry")
