"""Joint splay while standing (issue 46): a free-standing robot's sideways joints (hip abduction / roll, found from
their axes, not their names) further than advice.SPLAY from their pose fail the robot check with their own line
and fix; a quadruped whose hip abduction servos are too weak splays and ``--fix`` raises their kp within the band,
while the built-in quadruped and the Go2-style model stay within the bound."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

from envs.robot_check import advice
from envs.robot_check.band import band
from envs.robot_check.fix import fix
from envs.robot_check.rollouts import ResetSpread
from envs.robot_check.trials import Sim, quiet_mujoco_warnings, standing
from envs.robot_check.verdict import evaluate, render
from envs.robots.quadruped import QUADRUPED
from envs.robots.spec import ActuatorGroup, RobotSpec
from envs.scenes.assemble import build
from envs.tasks.locomotion.config import LocomotionEnvConfig

ROOT = Path(__file__).resolve().parents[3]
FEW = 128
"""Random rollouts of 2 s per check here (the subject is standing; the tool runs 1024)."""
_RND = LocomotionEnvConfig().randomization
SPREAD = ResetSpread(_RND.init_joint_scale, _RND.init_base_vel)
"""The flat task's reset spread."""
WEAK_HIPS = dataclasses.replace(QUADRUPED, name="weak_hips", actuators=(
    ActuatorGroup(joints=".*_hip_joint", kp=10.0, kd=0.25, effort_limit=23.7),
    ActuatorGroup(joints=".*_thigh_joint", kp=20.0, kd=0.5, effort_limit=23.7),
    ActuatorGroup(joints=".*_calf_joint", kp=20.0, kd=0.5, effort_limit=35.55)))
"""The built-in quadruped with its hip abduction servos at half its kp: the rear legs splay about 0.26 rad."""


def _go_like() -> RobotSpec:
    spec = importlib.util.spec_from_file_location("go_like", ROOT / "examples" / "go_like" / "go_like.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GO_LIKE


def _check(spec: RobotSpec) -> dict:
    with quiet_mujoco_warnings():
        report = evaluate(build(spec), SPREAD, rollouts=FEW)
    report.update(task=spec.name, seconds=0.0)
    return report


def test_the_sideways_joints_are_found_from_their_axes():
    for spec, hips in ((QUADRUPED, "_hip_joint"), (_go_like(), "_hip_joint")):
        sim = Sim(build(spec))
        found = sorted(sim.driven_names[i] for i in sim.sideways)
        assert len(found) == 4 and all(n.endswith(hips) for n in found), found


def test_weak_hip_servos_splay_the_legs_and_the_line_says_raise_their_kp():
    report = _check(WEAK_HIPS)
    assert report["verdict"] == "FAIL", render(report)
    (problem,) = report["problems"]
    assert problem.startswith("the legs splay standing still (R") and f"bound {advice.SPLAY} rad" in problem, problem
    assert "raise kp of the sideways joints (.*_hip_joint: kp 10 / kd 0.25, band " in problem, problem
    assert max(abs(e) for e in report["standing"]["splay"].values()) > advice.SPLAY
    assert report["standing"]["base_height"] > advice.SAG * QUADRUPED.base_height  # not a sag: its own line


def test_fix_raises_the_splayed_groups_kp_within_the_band():
    result = fix(WEAK_HIPS, SPREAD, rollouts=FEW)
    assert result.report["verdict"] in ("OK", "WARN"), render(dict(result.report, task="weak", seconds=0.0))
    groups = result.spec.actuators
    assert not isinstance(groups, str)
    hip = next(g for g in groups if g.joints == ".*_hip_joint")
    assert hip.kp > 10.0, result.changes
    step = next(s for s in result.report["step_response"] if s["group"] == ".*_hip_joint")
    b = band(step["effort"], step["armature"])
    assert 0.99 * b.low <= hip.kp <= 1.01 * b.high, (hip, b.text())
    assert any(".*_hip_joint: kp 10 -> " in c for c in result.changes), result.changes
    assert max(abs(e) for e in result.report["standing"]["splay"].values()) <= advice.SPLAY


def test_the_built_in_and_the_go2_style_quadrupeds_stay_within_the_bound():
    for spec in (QUADRUPED, _go_like()):
        with quiet_mujoco_warnings():
            stand = standing(build(spec))
        assert stand.splay and max(abs(e) for e in stand.splay.values()) < 0.8 * advice.SPLAY, (spec.name, stand.splay)
        assert advice.splayed(stand) == {}
