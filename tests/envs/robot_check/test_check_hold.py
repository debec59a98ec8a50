"""Issue 46: held joints hold what they carry. A held group's band reaches up to the holding rule's kp (HOLD x M g r,
``envs/robot_check/band.py`` ``held``), so ``--fix`` keeps the G1-style draft's waist at that kp instead of pulling it
into its motor's band (7.13-75 for the 50 N m waist roll / pitch), and a held kp far above both is still flagged and
lowered, never below the rule; trained groups keep the motor's band."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from envs.robot_check.advice import Findings, servo_findings
from envs.robot_check.band import band, held
from envs.robot_check.fix import FixResult, _into_band, fix, group_band
from envs.robot_check.servo import StepResponse, step_response
from envs.robot_check.trials import quiet_mujoco_warnings
from envs.robots.draft import draft
from envs.robots.draft_gains import HOLD
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import ActuatorGroup, RobotSpec
from envs.scenes.assemble import build
from tests.envs.robot_check.test_check_cases import SPREAD

ROOT = Path(__file__).resolve().parents[3]
G1 = ROOT / "examples" / "g1_like" / "g1_like.xml"
WAIST = "waist_roll_joint|waist_pitch_joint"
"""The G1-style draft's held group on the two 50 N m waist motors (M g r 27.7 N m/rad: the rule's kp 138)."""


def _g1(waist_kp: float | None = None) -> RobotSpec:
    spec = draft(G1, "g1").spec
    if waist_kp is None:
        return spec
    assert not isinstance(spec.actuators, str)
    groups = tuple(dataclasses.replace(g, kp=waist_kp, kd=waist_kp / 40) if g.joints == WAIST else g
                   for g in spec.actuators)
    return dataclasses.replace(spec, actuators=groups)


def _by_joints(spec: RobotSpec) -> dict[str, ActuatorGroup]:
    assert not isinstance(spec.actuators, str)
    return {g.joints: g for g in spec.actuators}


def _steps(spec: RobotSpec) -> tuple[ResolvedRobot, list[StepResponse]]:
    with quiet_mujoco_warnings():
        robot = build(spec)
        return robot, step_response(robot)


def _waist(steps: list[StepResponse]) -> StepResponse:
    return next(s for s in steps if s.group == WAIST + " (held)")


def test_a_held_groups_band_reaches_up_to_the_holding_rule_and_a_trained_groups_does_not():
    motor = band(50.0, 0.00721945)  # the G1's 50 N m motor: 7.13-75
    assert (round(motor.low, 2), motor.high) == (7.13, 75.0)
    waist = held(motor, 27.667)
    assert waist.low == motor.low and waist.high == pytest.approx(HOLD * 27.667, rel=0.005)
    assert waist.kd_high == pytest.approx(0.1 * waist.high) and "held: up to 5 x M g r 27.7 N m/rad" in waist.text()
    assert held(motor, 0.0) == motor and held(motor, 4.86) == motor  # trained (0), an arm below the motor's top


def test_fix_keeps_the_drafted_g1_waist_at_the_holding_rule():
    robot, steps = _steps(_g1())
    waist = _waist(steps)
    assert waist.kp == 138.0 and waist.carried == pytest.approx(27.7, abs=0.05)
    spec = robot.spec
    groups = _by_joints(spec)
    assert group_band(groups[WAIST], waist).high == pytest.approx(138.3, abs=0.1)
    out = FixResult(spec, {})
    assert _into_band(spec, robot, steps, out) is None and not out.changes, out.changes
    f = Findings()
    servo_findings(steps, 0.005, False, f)
    assert not [n for n in f.advice + f.notes if "above the makers' band" in n], f
    trained = next(s for s in steps if not s.held and "knee" in s.group)
    assert trained.carried == 0.0 and group_band(groups[trained.group], trained) == band(139.0, trained.armature)


def test_a_held_kp_between_the_motors_band_and_the_rule_is_kept():
    robot, steps = _steps(_g1(waist_kp=100.0))  # above the motor's 75, below the rule's 138
    out = FixResult(robot.spec, {})
    assert _into_band(robot.spec, robot, steps, out) is None, out.changes


def test_a_held_kp_five_times_the_rule_is_flagged_and_fix_lowers_it_to_the_rule_not_the_motors_band():
    robot, steps = _steps(_g1(waist_kp=690.0))
    f = Findings()
    servo_findings(steps, 0.005, False, f)
    (line,) = [n for n in f.notes if "above the makers' band" in n]
    assert line.startswith(f"{WAIST} (held): kp 690 is above the makers' band for a held joint on this motor (kp "
                           "7.13-138 (mjlab's rule on armature 0.00722: kp 28.5, kd 1.81; held: up to 5 x M g r 27.7 "
                           "N m/rad, the holding rule)"), line
    out = FixResult(robot.spec, {})
    lowered = _into_band(robot.spec, robot, steps, out)
    assert lowered is not None
    group = _by_joints(lowered)[WAIST]
    assert group.kp == 138.0 and group.kd <= 13.8, group
    assert out.changes == [f"{WAIST}: kp 690 -> 138, kd 17.2 -> 7.71 (into the makers' band kp 7.13-138 (mjlab's "
                           "rule on armature 0.00722: kp 28.5, kd 1.81; held: up to 5 x M g r 27.7 N m/rad, the "
                           "holding rule))"], out.changes


def test_the_whole_fix_on_the_g1_draft_keeps_its_held_waist():
    """--fix on the drafted G1-style model (what ``menagerie:unitree_g1@g1_mjlab`` serves): the waist stays at the
    holding rule's 138 / 174, no "into the makers' band" line for a held group, and the verdict is OK (11 s)."""
    with quiet_mujoco_warnings():
        result = fix(_g1(), SPREAD, rollouts=128)
    groups = _by_joints(result.spec)
    assert (groups[WAIST].kp, groups["waist_yaw_joint"].kp) == (138.0, 174.0)
    assert not [c for c in result.changes if "waist" in c], result.changes
    assert result.report["verdict"] == "OK", (result.report["problems"], result.log)
