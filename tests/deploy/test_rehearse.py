"""The real-time rehearsal: the runtime drives the simulated robot (its own process, UDP on loopback, torque PD at
1 kHz, joints in another order) with the repository's trained quadruped policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract.errors import UserError
from deploy.rehearse import rehearse_one
from deploy.runtime.safety import SafetyConfig
from deploy.simrobot import SimRobotConfig

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "tests" / "data" / "quadruped_policy_format1.onnx"
SDK_ORDER = ("FL_calf_joint", "FL_hip_joint", "FL_thigh_joint", "FR_calf_joint", "FR_hip_joint", "FR_thigh_joint",
             "RL_calf_joint", "RL_hip_joint", "RL_thigh_joint", "RR_calf_joint", "RR_hip_joint", "RR_thigh_joint")
"""Alphabetical: not the policy's FR, FL, RR, RL order."""


@pytest.mark.exclusive  # real-time bounds: alone under xdist (tests/parallel.py)
def test_five_seconds_in_real_time_walk_over_udp(tmp_path):
    """Robust under load: the deadline watchdog is off and the staleness limits are wide here (a loaded machine
    delays both processes; the slow test below checks the deadlines)."""
    sim = SimRobotConfig(policy=str(POLICY), sdk_order=SDK_ORDER, sensor_latency_s=0.005, command_latency_s=0.005)
    safety = SafetyConfig(max_missed_deadlines=0, max_unchanged_s=0.3, max_sample_age_s=0.5)
    row = rehearse_one(POLICY, sim, 5.0, (0.5, 0.0, 0.0), safety, log_csv=tmp_path / "ticks.csv")
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
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --command=0.5,0 is not allowed; expected vx,vy,yaw_rate"


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


@pytest.mark.parametrize("actuation", ["torque_pd", "file"])
def test_the_simulated_robot_stands_on_its_firmware_stance(actuation):
    """No runtime, no network: the firmware holds the default pose at the policy's gains for 1 s of simulated
    time (torque PD at 1 kHz, or the scene's servos at the training timestep); samples come in SDK order."""
    import numpy as np

    from deploy.simrobot import SimulatedRobot

    robot = SimulatedRobot(SimRobotConfig(policy=str(POLICY), actuation=actuation, sdk_order=SDK_ORDER))
    assert robot.dt == (0.001 if actuation == "torque_pd" else 0.005)
    for _ in range(round(1.0 / robot.dt)):
        robot.step()
    assert not robot.fallen() and 0.2 < robot.data.qpos[robot.bq + 2] < 0.4
    s = robot.sample(1.0)
    np.testing.assert_allclose(s.joint_pos, robot.default, atol=0.35)  # kp 20 sags about 0.2 rad under the weight
    assert s.joint_pos.shape == (12,) and robot.joint_names == SDK_ORDER


def test_udp_packets_round_trip():
    import numpy as np

    from deploy.runtime import udp
    from deploy.runtime.robot import JointCommand, RobotState

    rng = np.random.default_rng(0)
    s = RobotState(12.5, rng.normal(size=12), rng.normal(size=12), np.array([1.0, 0, 0, 0]), rng.normal(size=3), None,
                   rng.normal(size=187))
    seq, back = udp.unpack_state(udp.pack_state(7, s))
    assert seq == 7 and back.stamp == 12.5 and back.base_lin_vel is None
    for a, b in ((s.joint_pos, back.joint_pos), (s.joint_vel, back.joint_vel), (s.height_scan, back.height_scan)):
        np.testing.assert_array_equal(a, b)
    c = JointCommand(*(rng.normal(size=12) for _ in range(4)))
    seq, stamp, got, ref = udp.unpack_command(udp.pack_command(3, 1.5, c, np.array([0.5, 0.0, 0.1])))
    assert seq == 3 and stamp == 1.5 and list(ref) == [0.5, 0.0, 0.1]
    np.testing.assert_array_equal(got.kd, c.kd)


def test_largest_walking_latency_leaves_out_runs_the_machine_stalled():
    from deploy.rehearse import largest_walking_latency, machine_stalled

    def row(ms, walks, reason="", lag=1.0):
        r = {"group": "latency_ms", "value": ms, "walks": walks, "runtime": {"reason": reason},
             "robot": {"max_lag_ms": lag}}
        r["machine_stalled"] = machine_stalled(r)
        return r

    rows = [row(0, True), row(20, True), row(20, False, "watchdog: 1 missed deadline(s)"), row(40, True),
            row(40, True), row(60, True, lag=50.0), row(60, False), row(80, True)]
    assert [r["machine_stalled"] for r in rows] == [False, False, True, False, False, True, False, False]
    assert largest_walking_latency(rows) == 40  # 60 failed once on its own; 80 beyond a failure does not count
    assert largest_walking_latency([row(0, False)]) is None
