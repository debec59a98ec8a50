"""Issue 46, points 1-5: gains within what makers run (``envs/robot_check/band.py``), the file's joint damping
named in the advice, the file's contact model kept (a departure said in one line), standing judged on foot drift,
held joints never raised for a step response; each on a model written here."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from envs.robot_check.advice import Contact, Findings, cone_finding, servo_findings
from envs.robot_check.band import MAKERS, band, makers_for
from envs.robot_check.fix import FixResult, _into_band, _quicken, fix
from envs.robot_check.fix_solver import contacts as _contacts
from envs.robot_check.servo import StepResponse, step_response
from envs.robot_check.trials import quiet_mujoco_warnings
from envs.robots.draft import draft
from envs.robots.spec import ActuatorGroup, RobotSpec, SimOverrides
from envs.scenes.assemble import build
from tests.envs.robot_check.test_check_cases import SPREAD, _check, anymal_c
from tests.menagerie_models import anymal_c_xml
from tests.robot_models import write

ROOT = Path(__file__).resolve().parents[3]
GO = ROOT / "examples" / "go_like" / "go_like.xml"


def _go(**fields) -> RobotSpec:
    return dataclasses.replace(draft(GO, "go").spec, **fields)


def test_the_band_covers_every_makers_published_gains():
    for m in MAKERS:
        b = band(m.effort, m.armature)
        assert b.low <= m.kp <= 1.001 * b.high and m.kd <= b.kd_high, (m, b.text())  # published: rounded
    g1_knee = band(139.0, 0.025101925)
    assert g1_knee.rule_kp == pytest.approx(99.1, abs=0.1) and g1_knee.rule_kd == pytest.approx(6.31, abs=0.01)
    assert [m.robot for m in makers_for(23.7)][0] == "Unitree Go2 / Go1"
    assert band(math.inf, 0.0).high == math.inf  # no armature, no limit: no band


def test_a_kp_five_times_a_makers_is_flagged_with_the_band_and_the_makers_values():
    """go_like (a Go2-style file: 23.7 N m hips, armature 0.01) at kp 100 on the hips: 5 x Unitree's RL kp 20 (the
    spec's gains: a note); the ANYmal-C-style file's own servos at kp 400: 5 x ANYmal C's 80 (advice)."""
    groups = (ActuatorGroup(".*_hip_joint", kp=100.0, kd=2.5, effort_limit=23.7),
              ActuatorGroup(".*_(thigh|calf)_joint", kp=30.0, kd=0.75, effort_limit=45.4))
    with quiet_mujoco_warnings():
        steps = step_response(build(_go(actuators=groups)))
    f = Findings()
    servo_findings(steps, 0.005, False, f)
    (line,) = [a for a in f.notes if "above the makers' band" in a]
    assert line.startswith(".*_hip_joint: kp 100 is above the makers' band for this motor (kp 9.87-39.5"), line
    assert "makers run Unitree Go2 / Go1 (23.7 N m) kp 20 / kd 0.5, unitree_rl_gym" in line, line


def test_a_files_servos_at_five_times_a_makers_kp_are_advised_down_and_fix_lowers_them(tmp_path):
    xml = anymal_c_xml().replace('<position kp="100" forcerange="-80 80"/>',
                                 '<position kp="400" kv="10" forcerange="-80 80"/>')
    spec = dataclasses.replace(anymal_c(tmp_path), mjcf=write(tmp_path, "stiff.xml", xml))
    with quiet_mujoco_warnings():
        robot = build(spec)
        steps = step_response(robot)
    f = Findings()
    servo_findings(steps, 0.005, False, f)
    (line,) = [a for a in f.advice if "above the makers' band" in a]
    assert line.startswith("kp 400 kd 10 limit 80: kp 400 is above the makers' band for this motor (kp 59.2-237"), line
    assert "makers run ANYmal C (80 N m) kp 80 / kd 2, legged_gym's ANYmal C" in line, line
    out = FixResult(spec, {})
    lowered = _into_band(spec, robot, steps, out)
    assert lowered is not None and not isinstance(lowered.actuators, str)
    (group,) = lowered.actuators
    assert group.kp == 237.0 and group.kd <= 23.7 and "kp 400 -> 237" in out.changes[0], out.changes


def test_the_files_joint_damping_is_named_and_fix_lowers_kd_not_raises_kp():
    """go_like's joints carry damping="2": at kd 0.593 the hips are over-damped and slow; the advice names the
    file's damping, and --fix lowers kd before raising kp."""
    with quiet_mujoco_warnings():
        robot = build(_go())
        steps = step_response(robot)
    f = Findings()
    servo_findings(steps, 0.005, False, f)
    text = " ".join(f.advice + f.notes)
    assert "the joint damping=2 already gives damping ratio" in text and "at kd 0" in text, text
    out = FixResult(robot.spec, {})
    eased = _quicken(robot.spec, robot, steps, out)
    assert eased is not None and any("kd 0.593 -> 0" in c and "joint damping=2" in c for c in out.changes), out.changes


def test_held_joints_are_never_raised_for_a_step_response():
    slow = StepResponse("arms (held)", ("a",), kp=10.0, kd=0.0, step=0.25, rise_time=0.5, overshoot=0.0,
                        steady_state_error=0.1, held=True, effort=25.0)
    f = Findings()
    servo_findings([slow], 0.005, False, f)
    assert not f.advice and "held joints never step" in f.notes[0], f


def test_the_files_contact_model_is_kept_and_a_pyramidal_cone_never_keeps_a_high_impratio(tmp_path):
    elliptic = build(anymal_c(tmp_path))
    kept, departures = _contacts(elliptic)
    assert [c.text() for c in kept] == ["elliptic cone, impratio 100"]
    assert [c.text() for c in departures] == ["pyramidal cone, impratio 1"]
    high = build(anymal_c(tmp_path, sim=SimOverrides(timestep=0.005, cone="pyramidal")))
    kept, departures = _contacts(high)  # the file's impratio 100 under a pyramidal cone
    assert kept == [] and {c.impratio for c in departures if c.cone == "pyramidal"} == {1.0}


def test_a_pyramidal_cone_at_a_high_impratio_is_advised_against():
    f = Findings()
    cone_finding(Contact("pyramidal", 100.0), Contact("elliptic", 100.0), f)
    assert f.advice == ["pyramidal cone, impratio 100: MuJoCo advises against a high impratio with a pyramidal cone: "
                        "keep the file's elliptic cone, impratio 100 (leave SimOverrides' cone and impratio unset)"]
    quiet = Findings()
    cone_finding(Contact("pyramidal", 1.0), Contact("elliptic", 100.0), quiet)
    cone_finding(Contact("elliptic", 100.0), Contact("elliptic", 100.0), quiet)
    assert not quiet.advice


SLIDING = SimOverrides(timestep=0.005, cone="pyramidal")
"""The ANYmal-C-style model under a pyramidal cone at the file's impratio 100: its soft feet slide about 6 cm."""
SOFT = (ActuatorGroup(".*", kp=60.0, kd=1.5, effort_limit=80.0),)


@pytest.mark.slow
def test_feet_sliding_standing_still_fail_with_their_own_line_and_fix_keeps_the_files_cone(tmp_path):
    spec = anymal_c(tmp_path, actuators=SOFT, sim=SLIDING)
    report = _check(spec)
    assert report["standing"]["base_height"] > 0.8 * spec.base_height  # no sag: the slide alone
    (line,) = [p for p in report["problems"] if p.startswith("the feet slide standing still")]
    assert "bound 0.05 m" in line and "keep the file's (leave SimOverrides' cone and impratio unset)" in line, line
    with quiet_mujoco_warnings():
        result = fix(spec, SPREAD, rollouts=128)
    assert result.report["verdict"] == "OK", (result.report["problems"], result.report["advice"])
    for s in result.report["step_response"]:  # within the band (issue 46, "What it must show")
        b = band(s["effort"], s["armature"])
        assert b.low <= s["kp"] <= 1.001 * b.high, (s["group"], s["kp"], b.text())
    assert result.spec.sim.cone is None and result.spec.sim.impratio is None, result.spec.sim  # the file's again
    assert any("contact settings: the robot file's (elliptic cone, impratio 100)" in c for c in result.changes)
    assert max(result.report["standing"]["foot_drift"].values()) < 0.05


def _fixed_in_band(spec):
    """``fix`` over 128 rollouts, its verdict OK and every kp in its motor's band."""
    with quiet_mujoco_warnings():
        result = fix(spec, SPREAD, rollouts=128)
    report = result.report
    assert report["verdict"] == "OK", (report["problems"], report["advice"], result.log)
    for s in report["step_response"]:
        b = band(s["effort"], s["armature"])
        assert b.low <= s["kp"] <= 1.001 * b.high, (s["group"], s["kp"], b.text())
    return result


@pytest.mark.slow
def test_fix_on_the_unitree_style_draft_stays_in_the_band_and_the_verdict_does_not_argue_with_it():
    """The drafted go_like (Menagerie's Go2 as it comes: motors, joint damping 2, elliptic cone / impratio 100):
    --fix lowers the hips' needless kd, keeps the file's contact model, every kp in its band; the final verdict
    advises neither "raise kp" nor "lower kd" against what --fix set (issue 46, points 1-5)."""
    spec = _go()
    result = _fixed_in_band(spec)
    report = result.report
    assert report["solver"]["cone"] == "elliptic" and report["solver"]["impratio"] == 100.0
    assert result.spec.sim.cone is None and result.spec.sim.impratio is None  # the file's, untouched
    assert any("kd 0.593 -> 0" in c and "joint damping=2" in c for c in result.changes), result.changes
    assert not any("raise kp" in a or "lower kd" in a for a in report["advice"]), report["advice"]


def test_a_group_at_its_mirror_twins_values_follows_their_change_and_a_front_rear_split_does_not():
    """--fix's rounds keep left and right alike (``_mirror_kept``): a lone FL calf group at the values of the group
    of its twin FR follows that group's raise; front and rear calves split at equal values stay apart (each
    joint's twin is in its own group)."""
    from envs.robot_check.fix import _mirror_kept

    legs = ActuatorGroup(".*_(hip|thigh)_joint", kp=23.7, kd=0.593, effort_limit=23.7)
    lone, rest = (ActuatorGroup(j, kp=45.4, kd=1.14, effort_limit=45.4) for j in ("FL_calf_joint",
                                                                                    "(FR|RL|RR)_calf_joint"))
    spec = _go(actuators=(legs, lone, rest))
    with quiet_mujoco_warnings():
        robot = build(spec)
    raised = dataclasses.replace(rest, kp=68.1, kd=1.4)
    out = FixResult(spec, {})
    kept = _mirror_kept(spec.actuators, _go(actuators=(legs, lone, raised)), robot, out)
    assert kept.actuators == (legs, dataclasses.replace(lone, kp=68.1, kd=1.4), raised)
    assert out.changes == ["FL_calf_joint: kp 45.4 -> 68.1, kd 1.14 -> 1.4 (as its mirror twins' group "
                           "(FR|RL|RR)_calf_joint: left and right kept alike)"]
    front, rear = (dataclasses.replace(lone, joints=j) for j in ("F._calf_joint", "R._calf_joint"))
    split = _go(actuators=(legs, front, dataclasses.replace(rear, kp=68.1, kd=1.4)))
    assert _mirror_kept((legs, front, rear), split, robot, FixResult(spec, {})) == split


@pytest.mark.slow
def test_fix_on_a_draft_with_a_missing_actuator_reaches_ok_within_the_band(tmp_path):
    """Issue 46, "What it must show": go_like without the FL calf's motor; the draft gives that joint its twin's
    values (tests/envs/robots/test_new_robot_guesses.py), and --fix reaches OK with every kp in its band and the
    lone calf at its twins' gains (the mirror kept)."""
    text = GO.read_text()
    line = '    <motor class="knee" name="FL_calf" joint="FL_calf_joint"/>\n'
    assert line in text
    text = text.replace(line, "").replace('ctrl="0 0 0 0 0 0 0 0 0 0 0 0"', 'ctrl="0 0 0 0 0 0 0 0 0 0 0"')
    spec = draft(write(tmp_path, "go.xml", text), "go").spec
    result = _fixed_in_band(spec)
    assert not isinstance(result.spec.actuators, str)
    gains = {g.joints: (g.kp, g.kd) for g in result.spec.actuators}
    (calves,) = [k for k in gains if "FR_calf_joint" in k]
    assert gains["FL_calf_joint"] == gains[calves], gains  # was 45.4 / 1.14 against its twins' 68.1 / 1.4
    assert any(c.startswith("FL_calf_joint: kp") and "left and right kept alike" in c for c in result.changes)
