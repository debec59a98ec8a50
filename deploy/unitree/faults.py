"""The real-robot sequence against the simulated robot over DDS on loopback, with a fault injected: the runs behind
the fault table of docs/deploy.md (and its tests, tests/deploy/test_unitree_faults.py).

    python -m deploy.unitree.faults [--profile unitree_go2|unitree_g1] [--quick]

Each run starts ``deploy/unitree/simrobot.py`` (its own process) and ``python -m deploy.unitree`` (another), the
remote pressing ``start`` at 0.3 s after the first command (pose over 1 s, hold from 1.3 s), ``A`` at 2.0 s (the
policy; the G1 hangs from a gantry until then), the sticks forward at 2.5 s and ``select`` at 4.5 s; the fault
begins in the pose (0.8 s), the hold (1.65 s) or the policy (3.0 s). A row: the phase the fault met, the line the
sequence printed, the time from the fault to the first damping command the robot got, and the largest target step
at every change of phase (the sequence's guard, and the robot's own count over every command it applied).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from deploy.unitree.dds import free_domain, loopback_config
from deploy.unitree.simrobot import MODE_MACHINE, DdsSimConfig, RemoteStep

ROOT = Path(__file__).resolve().parents[2]
POLICIES = {"unitree_go2": ROOT / "docs" / "quadruped_policy.onnx",
            "unitree_g1": ROOT / "docs" / "humanoid_policy.onnx"}
"""The shipped policy run on each profile."""
PROFILE_NAMES = tuple(POLICIES)
REMOTE = (RemoteStep(0.3, ("start",)), RemoteStep(0.6), RemoteStep(2.0, ("A",)), RemoteStep(2.3),
          RemoteStep(2.5, command=(0.3, 0.0, 0.0)), RemoteStep(4.5, ("select",), (0.3, 0.0, 0.0)))
"""What the simulated robot's remote does (seconds after the first command)."""
PHASES = {"pose": 0.8, "hold": 1.65, "policy": 3.0}
"""When a fault begins to land in each phase (seconds after the first command)."""
GANTRY_S = {"unitree_g1": 2.0}
"""The humanoid hangs from a gantry until the policy starts (``A`` at 2.0 s); the Go2 lies down under damping."""
FIRST_OFFSET_TOL = 0.2
"""Robot-side check: the first stiff command's targets within this of the joints' positions when it arrives (rad).
The sequence sends the position it read (within ``OperatorConfig.first_offset``, 0.02 rad); a Go2 sinking under
damping moves on while the command travels (a few rad/s for some ms on a loaded machine), a default pose would be
0.5-1.5 rad away."""


@dataclass(frozen=True)
class Scenario:
    """One run of the sequence."""

    profile: str
    """``unitree_go2`` or ``unitree_g1``."""
    fault: str = ""
    """``simrobot.FAULTS``; '' for none."""
    phase: str = "policy"
    """Where the fault is meant to land (``PHASES``)."""
    second_sender: bool = False
    """Another process sends rt/lowcmd from the start."""
    mode_machine: int = MODE_MACHINE
    """``unitree_hg``: the robot variant the simulated G1 reports (0: none, refused at the start)."""


def robot_steps(trace: dict[str, Any], period: float = 0.02) -> dict[str, float]:
    """From the robot's record of applied commands: the largest step between consecutive stiff commands per control
    period (a robot keeps only the newest command: one that replaced an unread one spans as many periods as their
    writer's timestamps differ), and the largest offset of a first stiff command (after damping) from the joints'
    positions then (rad)."""
    step = first = 0.0
    last: Optional[np.ndarray] = None
    last_ns = 0
    for _t, kp, target, q, sent_ns in trace["commands"]:
        kp, target, q = np.asarray(kp), np.asarray(target), np.asarray(q)
        if not np.any(kp > 0):
            last = None
            continue
        if last is None:
            first = max(first, float(np.max(np.abs(target - q))))
        else:
            periods = max(1, round((sent_ns - last_ns) * 1e-9 / period)) if sent_ns and last_ns else 1
            step = max(step, float(np.max(np.abs(target - last))) / periods)
        last, last_ns = target, sent_ns
    return {"max_step": step, "max_first_offset": first}


def run(sc: Scenario, timeout_s: float = 120.0) -> dict[str, Any]:
    """One scenario: the operator's summary, its output, the robot's report and the robot-side steps."""
    from deploy.rehearse import _ready_port
    from deploy.simrobot import SimRobotConfig

    policy = POLICIES[sc.profile]
    domain = free_domain()
    env = {**os.environ, "CYCLONEDDS_URI": loopback_config()}
    with tempfile.TemporaryDirectory() as tmp:
        trace, log = Path(tmp) / "trace.json", Path(tmp) / "states.json"
        cfg = DdsSimConfig(SimRobotConfig(policy=str(policy), seconds=14.0), sc.profile, domain, REMOTE,
                           fault=sc.fault, fault_at_s=PHASES[sc.phase] if sc.fault else 0.0,
                           mode_machine=sc.mode_machine, second_sender=sc.second_sender, trace=str(trace),
                           gantry_s=GANTRY_S.get(sc.profile, 0.0))
        sim = subprocess.Popen([sys.executable, "-m", "deploy.unitree.simrobot", cfg.to_json()], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _ready_port(sim)
            from deploy.onnx_policy import OnnxPolicy

            vel = any(n == "base_lin_vel" for n, _ in OnnxPolicy(str(policy)).metadata["obs_layout"])
            op = subprocess.run([sys.executable, "-m", "deploy.unitree", str(policy), "--interface", "lo", "--domain",
                                 str(domain), "--pose-seconds", "1", "--seconds", "4", "--log", str(log),
                                 "--connect-timeout", "5" if sc.mode_machine else "2",
                                 *(["--base-velocity"] if vel else [])], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
            sim.terminate()
            out, err = sim.communicate(timeout=30)
        finally:
            if sim.poll() is None:
                sim.kill()
                sim.wait(timeout=10)
        if sim.returncode != 0:
            raise RuntimeError(f"simulated robot failed: {err[-2000:]}")
        report = json.loads(out.strip().splitlines()[-1])
        summary = json.loads(log.read_text()) if log.exists() else {}
        steps = robot_steps(json.loads(trace.read_text())) if trace.exists() else {}
    return {"scenario": sc, "returncode": op.returncode, "stdout": op.stdout, "stderr": op.stderr,
            "summary": summary, "robot": report, "robot_steps": steps}


def met(result: dict[str, Any]) -> tuple[str, str]:
    """The phase the sequence was in when it left for the e-stop, and the line it printed then."""
    states = result["summary"].get("states", [])
    for before, now in zip(states, states[1:], strict=False):
        if now["state"] == "estop":
            return before["state"], now["reason"]
    return "", ""


def fell_behind(result: dict[str, Any]) -> str:
    """Why this run says more about the machine's load than about the sequence ('' when it does not): a missed
    deadline, a fault met in another phase than meant, or a silence of the simulated robot taken for a lost state."""
    sc, robot = result["scenario"], result["robot"]
    refused = sc.second_sender or not sc.mode_machine
    if not refused and result["returncode"] != 0:
        return f"exit {result['returncode']}: " + (result["stderr"].strip().splitlines() or [""])[-1]
    states = result["summary"].get("states", [])
    late = [s["reason"] for s in states if "missed deadline" in s["reason"]]
    if late:
        return late[0]
    phase, reason = met(result)
    if "lost:" in reason and sc.fault != "lost" and robot.get("max_lag_ms", 0) > 50:
        return f"the simulated robot lagged {robot['max_lag_ms']:.0f} ms"
    if sc.fault and not sc.second_sender and phase != sc.phase:
        return f"the fault met {phase!r}"
    return ""


def row(result: dict[str, Any]) -> str:
    """One line of the fault table (markdown)."""
    sc, robot = result["scenario"], result["robot"]
    name = sc.profile.replace("unitree_", "").upper()
    if sc.second_sender or not sc.mode_machine:
        line = result["stderr"].strip().splitlines()[-1] if result["stderr"].strip() else ""
        what = "another rt/lowcmd sender" if sc.second_sender else "mode_machine 0"
        return (f"| {name} | {what} | connect | `{line}` | refused, exit {result['returncode']}, "
                f"{robot['servo_commands']} commands sent |")
    if result["returncode"] != 0:
        return f"| {name} | {sc.fault or 'none'} | | failed: {fell_behind(result)} | |"
    steps = result["summary"].get("largest_target_step", {})
    changes = ", ".join(f"{k} {v:.3f}" for k, v in steps.items() if ">" in k or "first" in k)
    rs = result["robot_steps"]
    robot_side = (f"robot: every step <= {rs.get('max_step', float('nan')):.3f}, "
                  f"first {rs.get('max_first_offset', 0):.3f}")
    behind = fell_behind(result)
    note = f" (spoiled by the machine's load: {behind})" if behind else ""
    if not sc.fault:
        return f"| {name} | none (select at 4.5 s) | all{note} | steps at changes: {changes} | {robot_side} |"
    phase, reason = met(result)
    ms = robot.get("damping_after_ms")
    when = "never" if ms is None else f"{ms:.0f} ms"
    return f"| {name} | {sc.fault} | {phase or '?'}{note} | `{reason}` | damping after {when}; {robot_side} |"


def scenarios(profiles: tuple[str, ...], quick: bool) -> list[Scenario]:
    out: list[Scenario] = []
    for p in profiles:
        out.append(Scenario(p))
        for fault in ("frozen", "bad_crc", "lost", "nan"):
            for phase in (("policy",) if quick else tuple(PHASES)):
                out.append(Scenario(p, fault, phase))
        out.append(Scenario(p, second_sender=True))
        if p == "unitree_g1":
            out.append(Scenario(p, mode_machine=0))
    return out


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m deploy.unitree.faults", description=__doc__.splitlines()[0])
    p.add_argument("--profile", choices=tuple(POLICIES), action="append", help="(default: both)")
    p.add_argument("--quick", action="store_true", help="each fault in the policy phase only")
    p.add_argument("--fault", action="append", help="only these faults ('none', 'sender', 'mode_machine' or "
                   "simrobot.FAULTS; default: all)")
    p.add_argument("--phase", action="append", choices=tuple(PHASES), help="only faults in these phases")
    p.add_argument("--tries", type=int, default=3,
                   help="runs per row at most, while the machine's load spoils one (fell_behind)")
    args = p.parse_args(argv)
    print("| robot | fault | phase met | line printed | result |")
    print("|---|---|---|---|---|")
    for sc in scenarios(tuple(args.profile or POLICIES), args.quick):
        kind = "sender" if sc.second_sender else "mode_machine" if not sc.mode_machine else sc.fault or "none"
        if (args.fault and kind not in args.fault) or (args.phase and sc.fault and sc.phase not in args.phase):
            continue
        for _ in range(args.tries):
            result = run(sc)
            if not fell_behind(result):
                break
        print(row(result), flush=True)


if __name__ == "__main__":
    main()
