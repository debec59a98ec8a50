"""What a robot supplies: every observation term declares its source (contract/schema.py), and the runtime and the
rehearsal refuse, in one line naming the term and the alternatives, a policy that observes what the robot lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from contract import terms
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.controller import Controller
from deploy.runtime.supply import LOW_STATE, PROFILES, SIMULATED, Supplies, check, lacking
from deploy.sim2sim_reach import TERMS as REACH_TERMS
from envs.tasks.locomotion.obs_table import TERM_NAMES

ROOT = Path(__file__).resolve().parents[3]
POLICY = ROOT / "docs" / "humanoid_policy.onnx"
"""A shipped policy that observes base_lin_vel."""
LOW_STATE_LAYOUT = [["base_ang_vel", 3], ["projected_gravity", 3], ["commands", 3], ["joint_pos", 12],
                    ["joint_vel", 12], ["last_actions", 12]]


def test_every_term_declares_one_known_source():
    for name in set(TERM_NAMES) | set(terms.FROM_READING) | set(REACH_TERMS):
        assert name in terms.TERMS, f"observation term {name} is not in the contract"
    assert {t.source for t in terms.TERMS.values()} <= set(terms.SOURCES)
    by_source = {name: t.source for name, t in terms.TERMS.items()}
    assert by_source["base_lin_vel"] == "estimator" and by_source["height_scan"] == "perception"
    assert by_source["joint_pos"] == by_source["joint_vel"] == "joint_state"
    assert by_source["base_ang_vel"] == by_source["projected_gravity"] == "imu"
    assert by_source["commands"] == "operator" and by_source["last_actions"] == "runtime"
    assert all(s.instead for s in terms.SOURCES.values() if s.robot)  # a refusal always says what to do


def test_a_low_state_robot_lacks_the_estimator_and_perception_terms_only():
    meta = {"task": "t", "obs_layout": [["base_lin_vel", 3], *LOW_STATE_LAYOUT, ["height_scan", 4]]}
    assert lacking(meta, LOW_STATE) == ["base_lin_vel", "height_scan"]
    assert lacking(meta, SIMULATED) == []
    check({"task": "t", "obs_layout": LOW_STATE_LAYOUT}, LOW_STATE)  # accepted
    with pytest.raises(UserError) as e:
        check(meta, LOW_STATE, "runtime")
    line = str(e.value)
    assert "\n" not in line and line.startswith("runtime: the policy of task 't' observes base_lin_vel (also: "
                                                "height_scan), which a state estimator supplies ('estimator')")
    assert "env.policy_exclude=[base_lin_vel]" in line and "RobotState.base_lin_vel" in line


def test_a_profile_names_known_sources_only():
    with pytest.raises(UserError, match="unknown source\\(s\\) lidar; known: joint_state"):
        Supplies("my robot", ("joint_state", "lidar"))
    assert set(PROFILES) == {"simulated", "low-state"}


def test_the_runtime_refuses_a_policy_the_robot_cannot_feed_before_anything_moves():
    policy = OnnxPolicy(POLICY)
    joints = list(policy.metadata["joint_names"]) + list(policy.metadata["held_joint_names"])
    with pytest.raises(UserError, match="observes base_lin_vel, which a state estimator supplies"):
        Controller(policy, joints, supplies=LOW_STATE)
    Controller(policy, joints, supplies=SIMULATED)
    policy.metadata["obs_layout"] = [layout for layout in policy.metadata["obs_layout"] if layout[0] != "base_lin_vel"]
    Controller(policy, joints, supplies=LOW_STATE)


def test_the_rehearsal_refuses_it_in_one_line_before_starting_the_robot():
    proc = subprocess.run([sys.executable, "-m", "deploy.rehearse", str(POLICY), "--supplies", "low-state"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: rehearse: the policy of task 'humanoid-flat' observes "
                                                   "base_lin_vel"), lines


def test_the_shipped_quadruped_policy_observes_only_what_a_low_state_carries():
    """docs/quadruped_policy.onnx (quadruped-flat-proprio, issue 40) runs on a Unitree low state; the file shipped
    before (it observes the base velocity) is refused there, naming the term."""
    check(OnnxPolicy(ROOT / "docs" / "quadruped_policy.onnx").metadata, LOW_STATE)
    old = OnnxPolicy(ROOT / "tests" / "data" / "quadruped_policy_format1.onnx").metadata
    with pytest.raises(UserError, match="base_lin_vel"):
        check(old, LOW_STATE)
