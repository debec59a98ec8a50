"""The Unitree connection over DDS on loopback: the configuration every test, rehearsal and simulated robot uses,
the real-robot command's operator sequence against the simulated robot (each in its own process), and the
rehearsal through the adapter. Skipped when cyclonedds is missing (pip install -e ".[unitree]")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cyclonedds", reason="cyclonedds is not installed (pip install -e '.[unitree]')")

from deploy.unitree.dds import free_domain, loopback_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
QUADRUPED = ROOT / "tests" / "data" / "quadruped_policy_format1.onnx"
HUMANOID = ROOT / "docs" / "humanoid_policy.onnx"
RT = hasattr(os, "sched_setscheduler") and os.geteuid() == 0
"""Root may run the two processes under SCHED_FIFO, as a robot computer does (a loaded machine then still keeps
their deadlines)."""
pytestmark = pytest.mark.xdist_group("dds")  # DDS on loopback, a random domain each: one at a time (tests/parallel.py)


@pytest.fixture(autouse=True)
def loopback_dds(monkeypatch):
    """Every test here, and every process it starts, runs DDS on loopback only."""
    monkeypatch.setenv("CYCLONEDDS_URI", loopback_config())


def _participant_trace(tmp_path: Path) -> str:
    """CycloneDDS's own account of the interfaces it selected, from a participant in a child process."""
    trace = tmp_path / "cdds.log"
    code = ("import os, sys; from deploy.unitree.dds import Participant; "
            f"p = Participant('lo', {free_domain()}, trace_file={str(trace)!r}); print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
    return trace.read_text()


def test_dds_stays_on_loopback(tmp_path):
    xml = loopback_config()
    assert os.environ["CYCLONEDDS_URI"] == xml
    for part in ('<NetworkInterface name="lo" multicast="false"/>', "<AllowMulticast>false</AllowMulticast>",
                 '<Peer Address="127.0.0.1"/>'):
        assert part in xml
    log = _participant_trace(tmp_path)
    # CycloneDDS's trace (the wording of 0.10.2 and 11.0.1 both): what it read, then what it chose
    for line in ("config: Domain/General/Interfaces/NetworkInterface[@name]: lo {0}",
                 "config: Domain/General/Interfaces/NetworkInterface[@multicast]: false {0}",
                 "config: Domain/General/AllowMulticast/#text: false {0}",
                 "config: Domain/Discovery/Peers/Peer[@Address]: 127.0.0.1 {0}"):
        assert line in log, line
    selected = log.split("selected interfaces: ")[1].splitlines()[0]
    assert selected.startswith("lo (index ") and selected.count("(index") == 1, selected  # loopback alone
    assert re.search(r"add_peer_address(es)?: add udp/127\.0\.0\.1:\d+", log)


def _start_simrobot(policy: Path, domain: int, remote: tuple, seconds: float, profile: str,
                    trace: str = "") -> subprocess.Popen:
    from deploy.rehearse import _ready_port
    from deploy.simrobot import SimRobotConfig
    from deploy.unitree.simrobot import DdsSimConfig

    sim = SimRobotConfig(policy=str(policy), seconds=seconds, rt_priority=49 if RT else 0)
    cfg = DdsSimConfig(sim, profile, domain, remote, trace=trace)
    proc = subprocess.Popen([sys.executable, "-m", "deploy.unitree.simrobot", cfg.to_json()], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _ready_port(proc) == domain  # "READY <domain>" within 30 s, or an error naming why
    except BaseException:
        proc.kill()
        proc.wait(timeout=10)
        raise
    return proc


def _report(proc: subprocess.Popen) -> dict:
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


def test_no_low_state_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "deploy.unitree", str(QUADRUPED), "--interface", "lo",
                           "--domain", str(free_domain()), "--base-velocity", "--connect-timeout", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: unitree: no low state on rt/lowstate within 1 s (interface lo, "
                                          "domain "), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "unitree: DDS on interface lo (multicast off, peer 127.0.0.1)" in proc.stdout


def test_bad_input_to_the_real_robot_command_is_one_line_before_dds_starts():
    cases = [(["--interface", "lo"], "error: unitree: the policy observes base_lin_vel, which Unitree's low state does "
              "not carry; publish an estimate on rt/legged_mjx/base_velocity and pass --base-velocity, or deploy a "
              "policy that does not observe it"),
             (["--interface", "wlan9", "--base-velocity"], "error: --interface='wlan9' is not a network interface of "
              "this machine; it has: "),
             (["--interface", "lo", "--robot", "unitree_h9"], "error: argument --robot: invalid choice: 'unitree_h9'")]
    for args, line in cases:
        proc = subprocess.run([sys.executable, "-m", "deploy.unitree", str(QUADRUPED), *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert proc.returncode == 2 and proc.stderr.startswith(line), (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "unitree: DDS on" not in proc.stdout


@pytest.mark.exclusive  # real-time bounds: alone under xdist (tests/parallel.py)
def test_operator_sequence_damping_pose_policy_estop_against_the_simulated_robot(tmp_path):
    """The real-robot command on loopback: the simulated Go2 plays the remote (start, then A, then the left stick
    forward, then select); the command must go through damping, the default pose and the policy to the e-stop."""
    from deploy.unitree.simrobot import RemoteStep

    domain = free_domain()
    remote = (RemoteStep(0.5, ("start",)), RemoteStep(0.8), RemoteStep(3.0, ("A",)), RemoteStep(3.3),
              RemoteStep(3.5, command=(0.5, 0.0, 0.0)), RemoteStep(6.5, ("select",), (0.5, 0.0, 0.0)))
    sim = _start_simrobot(QUADRUPED, domain, remote, 20.0, "unitree_go2", trace=str(tmp_path / "trace.json"))
    log = tmp_path / "states.json"
    try:
        rt = ["--rt-priority", "50"] if RT else []
        op = subprocess.run([sys.executable, "-m", "deploy.unitree", str(QUADRUPED), "--interface", "lo", "--domain",
                             str(domain), "--base-velocity", "--pose-seconds", "1.5", "--seconds", "5",
                             "--show-joints", "1", "--log", str(log), *rt], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
        report = _report(sim)
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait(timeout=10)
    assert op.returncode == 0, op.stderr[-3000:]
    summary = json.loads(log.read_text())
    states = [s["state"] for s in summary["states"]]
    print(op.stdout, report, os.getloadavg())
    assert states == ["connected", "damping", "pose", "hold", "policy", "estop", "end"], summary["states"]
    assert "select on the remote" in summary["states"][-2]["reason"] and summary["mode"] == "estop"
    assert report["bad_crc"] == 0 and report["commands_applied"] > 300, report
    # Under damping the robot sinks to the floor (the simulated robot counts that as its first fall); the pose
    # phase stands it up and the policy walks it on the stick's 0.5 m/s for about 3 s without tilting.
    assert report["forward_m"] > 0.8, report
    assert "] policy: the policy runs" in op.stdout
    assert "joints (rad): FR_hip_joint=" in op.stdout  # --show-joints: the sign check's printout
    # targets continuous over the whole sequence (issue 45): the robot's count over every command it applied, and
    # the sequence's own at each change of phase (the hold once restarted the move: a 1.23 rad step)
    from deploy.unitree.faults import robot_steps

    assert robot_steps(json.loads((tmp_path / "trace.json").read_text()))["max_step"] <= 0.6 + 1e-4
    steps = summary["largest_target_step"]
    assert steps["pose>hold"] <= steps["pose"] + 1e-9 and steps["hold>policy"] <= 0.6 + 1e-9, steps


@pytest.mark.slow
def test_rehearsal_over_dds_drives_a_g1_profile_in_real_time(tmp_path):
    """``deploy.rehearse --transport unitree-dds`` on the humanoid (legs in hip yaw-roll-pitch order, arms held):
    the unitree_hg messages with mode_machine echoed and right checksums, the command from the remote's sticks."""
    rt = ["--rt-priority", "50"] if RT else []
    proc = subprocess.run([sys.executable, "-m", "deploy.rehearse", str(HUMANOID), "--transport", "unitree-dds",
                           "--quick", "--latencies", "0", "--seconds", "5", "--out", str(tmp_path), *rt], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "rehearsal.json").read_text())
    row = result["settings"][0]
    robot, runtime = row["robot"], row["runtime"]
    print(robot, {k: v for k, v in runtime.items() if k.endswith("_ms")}, os.getloadavg(), rt)
    assert result["transport"] == "unitree-dds" and robot["profile"] == "unitree_g1"
    assert robot["bad_crc"] == 0 and robot["wrong_mode_machine"] == 0
    assert robot["commands_applied"] >= 240 and robot["states_sent"] > 2000
    if runtime["mode"] != "run" and "missed deadline" in runtime["reason"]:
        pytest.skip(f"this machine could not keep the deadlines: {runtime['reason']} (load {os.getloadavg()})")
    assert runtime["mode"] == "run", runtime["reason"]
    assert not robot["fell"] and robot["forward_m"] > 0.8, robot
