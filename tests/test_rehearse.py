"""The real-time rehearsal: the runtime drives the simulated robot (its own process, UDP on loopback, torque PD at
1 kHz, joints in another order) with the repository's trained quadruped policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deploy.rehearse import rehearse_one
from deploy.runtime.safety import SafetyConfig
from deploy.simrobot import SimRobotConfig
from rl_core.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "docs" / "quadruped_policy.onnx"
SDK_ORDER = ("FL_calf_joint", "FL_hip_joint", "FL_thigh_joint", "FR_calf_joint", "FR_hip_joint", "FR_thigh_joint",
             "RL_calf_joint", "RL_hip_joint", "RL_thigh_joint", "RR_calf_joint", "RR_hip_joint", "RR_thigh_joint")
"""Alphabetical: not the policy's FR, FL, RR, RL order."""


def test_five_seconds_in_real_time_walk_over_udp(tmp_path):
    """Robust under load: the deadline watchdog is off and the staleness limits are wide here (a loaded machine
    delays both processes; the slow test below checks the deadlines)."""
    sim = SimRobotConfig(policy=str(POLICY), sdk_order=SDK_ORDER, sensor_latency_s=0.005, command_latency_s=0.005)
    row = rehearse_one(POLICY, sim, 5.0, (0.5, 0.0, 0.0), SafetyConfig(max_missed_deadlines=0, max_unchanged_s=0.3, max_sample_age_s=0.5),
                       log_csv=tmp_path / "ticks.csv")
    robot, runtime = row["robot"], row["runtime"]
    assert runtime["mode"] == "run", runtime["reason"]
    assert not robot["fell"] and robot["forward_m"] > 1.0, robot  # 4 s at 0.5 m/s after 1 s standing
    assert robot["physics_dt"] == 0.001 and robot["commands_applied"] >= 240 and robot["states_sent"] > 2000
    assert robot["lin_vel_tracking_error"] < 0.25
    assert len((tmp_path / "ticks.csv").read_text().splitlines()) == 251


def test_a_simulated_robot_that_cannot_start_is_reported_and_reaped():
    sim = SimRobotConfig(policy=str(POLICY), actuation="hydraulic")
    with pytest.raises(UserError, match="actuation='hydraulic' is not allowed"):
        rehearse_one(POLICY, sim, 3.0, (0.5, 0.0, 0.0))


def test_bad_rehearse_arguments_exit_2_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "deploy.rehearse", str(POLICY), "--command", "0.5,0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --command=0.5,0 is not allowed; expected vx,vy,yaw_rate"


@pytest.mark.slow
def test_no_deadline_missed_at_50_hz_over_60_seconds(tmp_path):
    """The rehearse command in a child process (time limit, killed on expiry) with the runtime and the simulated
    robot under SCHED_FIFO where this user may ask for it, otherwise with the normal scheduler: then run it when
    the machine is quiet (``uptime``), since it measures this machine's timing as much as the code."""
    rt = ["--rt-priority", "50"] if hasattr(os, "sched_setscheduler") and os.geteuid() == 0 else []
    proc = subprocess.run([sys.executable, "-m", "deploy.rehearse", str(POLICY), "--quick", "--latencies", "0",
                           "--seconds", "60", "--out", str(tmp_path), *rt], capture_output=True, text=True, cwd=ROOT,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "rehearsal.json").read_text())
    runtime, robot = result["settings"][0]["runtime"], result["settings"][0]["robot"]
    print(os.getloadavg(), rt, runtime)
    assert runtime["rate_hz"] == 50.0 and runtime["ticks"] == 3000 - 5
    assert runtime["missed_deadlines"] == 0 and runtime["mode"] == "run", runtime["reason"]
    assert not robot["fell"] and robot["forward_m"] > 20.0  # 59 s at 0.5 m/s
