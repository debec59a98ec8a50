"""The real-robot sequence checked independently: ``python -m deploy.unitree``, run as a user runs it, against a
robot side written from Unitree's SDK alone (``unitree_side_robot.py``), each fault in each phase.

    python -m tools.experiments.unitree_side_check --sdk /tmp/unitree_sdk2_python --mroot /tmp/mroot
        [--profile go2|g1] [--fault none|frozen|bad_crc|lost|nan|sender|mode_machine] [--phase pose|hold|policy]
        [--tries 3] [--json results.json] [--rt-priority 0] [--robot-python PYTHON]

``--sdk``: unitree_sdk2_python's folder (not vendored; e.g. the repository's snapshot extracted there);
``--mroot``: the models of ``python -m tests.menagerie_models ROOT`` (``unitree_go2/go2.xml``,
``unitree_g1/g1_mjlab.xml``). Each run: the robot side (its own process, loopback, a drawn domain) until READY,
then ``python -u -m deploy.unitree POLICY --interface lo --domain D --pose-seconds 1 --seconds 4`` (stdin closed;
the phases advanced by the robot's wireless remote: ``start`` at 0.3 s after the first command, ``A`` at 2.0 s,
the left stick forward at 2.5 s, ``select`` at 4.5 s), each line of its output stamped with the time it arrived.
The fault begins 0.8 s (pose), 1.65 s (hold) or 3.0 s (policy) after the first command. Measured from the robot's
record of every command it received: the largest step of the q targets between consecutive stiff commands (per
control period, 20 ms, by the writer's timestamps) within 0.1 s of each change of phase the program printed and
over the whole run; the first stiff command's offset from the joints' positions; the time from the fault to the
first damping command (every kp 0); stiff commands after it; with another sender, the program's commands
received. This module imports nothing of the project: it runs both programs and reads their output.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
ROBOT = Path(__file__).resolve().parent / "unitree_side_robot.py"
PROFILES: dict[str, dict[str, Any]] = {
    "go2": {"family": "go", "model": "unitree_go2/go2.xml", "policy": "docs/quadruped_policy.onnx", "gantry_s": 0.0},
    "g1": {"family": "hg", "model": "unitree_g1/g1_mjlab.xml", "policy": "docs/humanoid_policy.onnx", "gantry_s": 2.0},
}
"""Per profile: the robot's messages, the model under --mroot, the shipped policy, how long the base hangs."""
PRESS = "start@0.3,A@2.0,select@4.5"
FORWARD_AT = 2.5
PHASES = {"pose": 0.8, "hold": 1.65, "policy": 3.0}
FAULTS = ("frozen", "bad_crc", "lost", "nan")
PERIOD = 0.02
"""The policy's control period (s): steps are per period."""
WINDOW = 0.1
"""A change of phase's steps: the stiff commands received within this of the line's arrival (s)."""
LINE = re.compile(r"^\[\s*([\d.]+) s\] (\w+): (.*)$")


def _reader(stream: Any, lines: list[tuple[float, str]]) -> None:
    for text in stream:
        lines.append((time.monotonic(), text.rstrip("\n")))


def run_once(args: argparse.Namespace, profile: str, fault: str, phase: str) -> dict[str, Any]:
    """One run of both programs; the robot's report and record, the program's stamped lines and exit code."""
    prof = PROFILES[profile]
    domain = random.randint(1, 200)
    sender, machine0 = fault == "sender", fault == "mode_machine"
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "commands.json"
        model = str(Path(args.mroot) / prof["model"])
        robot_cmd = [args.robot_python or sys.executable, str(ROBOT), "--sdk", args.sdk, "--model", model,
                     "--family", prof["family"], "--domain", str(domain), "--seconds", "20", "--press", PRESS,
                     "--forward-at", str(FORWARD_AT), "--gantry-s", str(prof["gantry_s"]), "--base-velocity",
                     "--record", str(record)]
        if fault in FAULTS:
            robot_cmd += ["--fault", fault, "--fault-at", str(PHASES[phase])]
        robot_cmd += ["--second-sender"] if sender else []
        robot_cmd += ["--mode-machine", "0"] if machine0 else []
        env = {k: v for k, v in os.environ.items() if k != "CYCLONEDDS_URI"}
        robot = subprocess.Popen(robot_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            ready = robot.stdout.readline() if robot.stdout else ""
            if ready.strip() != "READY":
                raise RuntimeError(f"robot side did not start: {ready} {robot.stderr.read() if robot.stderr else ''}")
            lines: list[tuple[float, str]] = []
            prog = subprocess.Popen([sys.executable, "-u", "-m", "deploy.unitree", prof["policy"], "--interface", "lo",
                                     "--domain", str(domain), "--pose-seconds", "1", "--seconds", "4",
                                     "--connect-timeout", "2" if machine0 else "5", "--base-velocity",
                                     "--rt-priority", str(args.rt_priority)],
                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    stdin=subprocess.DEVNULL, env=env)
            reader = threading.Thread(target=_reader, args=(prog.stdout, lines), daemon=True)
            reader.start()
            try:
                code = prog.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                prog.kill()
                code = prog.wait(timeout=10)
            reader.join(timeout=5)
            robot.send_signal(signal.SIGTERM)
            out, err = robot.communicate(timeout=30)
        finally:
            if robot.poll() is None:
                robot.kill()
                robot.wait(timeout=10)
        if robot.returncode != 0:  # e.g. a cyclonedds 0.10 robot side against an 11.x program (docs/deploy.md)
            report = {"died": robot.returncode, "why": (err.strip().splitlines() or [""])[-1]}
        else:
            report = json.loads(out.strip().splitlines()[-1])
        commands = json.loads(record.read_text())["commands"] if record.exists() else []
    return {"profile": profile, "fault": fault, "phase": phase, "code": code, "lines": lines, "robot": report,
            "commands": commands}


def _steps(commands: list[list[Any]], lo: float = -1e18, hi: float = 1e18) -> float:
    """The largest step between consecutive stiff commands received in [lo, hi] (rad per control period)."""
    best, last = 0.0, None
    for t, ns, kp, _kd, q, _qm in commands:
        if not any(k > 0 for k in kp):
            last = None
            continue
        if last is not None and lo <= t <= hi:
            periods = max(1, round(((ns - last[1]) * 1e-9 if ns and last[1] else t - last[0]) / PERIOD))
            best = max(best, max(abs(a - b) for a, b in zip(q, last[2], strict=True)) / periods)
        last = (t, ns, q)
    return best


def _first_offsets(commands: list[list[Any]]) -> float:
    """The largest offset of a first stiff command (after damping) from the joints' positions when it arrived."""
    best, damped = 0.0, True
    for _t, _ns, kp, _kd, q, qm in commands:
        stiff = any(k > 0 for k in kp)
        if stiff and damped:
            best = max(best, max(abs(a - b) for a, b in zip(q, qm, strict=True)))
        damped = not stiff
    return best


def measure(res: dict[str, Any]) -> dict[str, Any]:
    """The row's numbers from one run."""
    states = [(t, m.group(2), m.group(3)) for t, text in res["lines"] if (m := LINE.match(text))]
    changes = {}
    for (_t0, before, _r0), (t1, now, _r1) in zip(states, states[1:], strict=False):
        if before in ("pose", "hold") and now in ("hold", "policy"):
            changes[f"{before}>{now}"] = _steps(res["commands"], t1 - WINDOW, t1 + WINDOW)
    estop = next(((b[1], n[2]) for b, n in zip(states, states[1:], strict=False) if n[1] == "estop"), ("", ""))
    robot = {"damped": None, "fault_start": None, "received": 0, "max_lag_ms": 0.0, "stiff_after_damping": 0,
             **res["robot"]}
    damped = (None if robot["damped"] is None or robot["fault_start"] is None
              else 1e3 * (robot["damped"] - robot["fault_start"]))
    late = [r for _t, s, r in states if s == "stance"]
    errors = [text for _t, text in res["lines"] if text.startswith("error:")]
    return {"changes": changes, "max_step": _steps(res["commands"]), "first": _first_offsets(res["commands"]),
            "met": estop[0], "line": estop[1], "damping_ms": damped, "late": late[0] if late else "",
            "error": errors[-1] if errors else "",
            "crc_lines": sum("a low state with a wrong CRC" in text for _t, text in res["lines"]),
            "received": robot["received"], "lag_ms": robot["max_lag_ms"],
            "stiff_after_damping": robot["stiff_after_damping"], "code": res["code"],
            "robot_died": robot.get("died"), "robot_why": robot.get("why", ""),
            "robot_bad_crc": robot.get("bad_crc", 0), "robot_wrong_mode_machine": robot.get("wrong_mode_machine", 0)}


def spoiled(res: dict[str, Any], m: dict[str, Any]) -> str:
    """Why a run says more about the machine's load than about the sequence ('' when it does not)."""
    if res["fault"] in ("sender", "mode_machine"):
        return ""
    if m["code"] != 0:
        return f"exit {m['code']}: {m['error']}"
    if m["late"]:
        return m["late"]
    if res["fault"] in FAULTS and m["met"] != res["phase"]:
        return f"the fault meant for {res['phase']!r} met {m['met'] or 'no phase'!r}"
    if res["fault"] not in ("lost",) and "lost:" in m["line"] and m["lag_ms"] > 50:
        return f"the robot side lagged {m['lag_ms']:.0f} ms"
    return ""


def row(res: dict[str, Any], m: dict[str, Any], note: str) -> str:
    name = res["profile"].upper()
    if m["robot_died"] is not None:
        last = m["error"] or next((t for _s, t in reversed(res["lines"]) if t.strip()), "")
        return (f"| {name} | {res['fault']} | | program: exit {m['code']}, `{last}` | the robot side died "
                f"(exit {m['robot_died']}): `{m['robot_why']}` |")
    robot = f"every step <= {m['max_step']:.3f}, first {m['first']:.3f}"
    if res["fault"] in ("sender", "mode_machine"):
        what = "another rt/lowcmd sender" if res["fault"] == "sender" else "mode_machine 0"
        return (f"| {name} | {what} | connect | `{m['error']}` | exit {m['code']}, {m['received']} commands "
                "received |")
    changes = ", ".join(f"{k} {v:.3f}" for k, v in m["changes"].items())
    spoil = f" (spoiled: {note})" if note else ""
    if res["fault"] == "none":
        return f"| {name} | none (select at 4.5 s) | all{spoil} | steps at changes: {changes} | {robot} |"
    when = "never" if m["damping_ms"] is None else f"{m['damping_ms']:.0f} ms"
    said = f"; the CRC line {m['crc_lines']}x" if res["fault"] == "bad_crc" else ""
    return (f"| {name} | {res['fault']} | {m['met'] or '?'}{spoil} | `{m['line']}` | damping after {when}, "
            f"{m['stiff_after_damping']} stiff after{said}; {robot}; at changes: {changes} |")


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m tools.experiments.unitree_side_check",
                                description=__doc__.splitlines()[0])
    p.add_argument("--sdk", required=True)
    p.add_argument("--mroot", required=True)
    p.add_argument("--profile", action="append", choices=tuple(PROFILES))
    p.add_argument("--fault", action="append", choices=("none", *FAULTS, "sender", "mode_machine"))
    p.add_argument("--phase", action="append", choices=tuple(PHASES))
    p.add_argument("--tries", type=int, default=3)
    p.add_argument("--timeout", type=float, default=60.0, help="longest run of the program (s)")
    p.add_argument("--json", default="", help="write every run's numbers here")
    p.add_argument("--robot-python", default="", help="the robot side's interpreter (default: this one; e.g. one "
                   "with cyclonedds 0.10.2, deploy/unitree/install_cyclonedds_0_10.sh)")
    p.add_argument("--rt-priority", type=int, default=0, help="the program's --rt-priority (0: normal scheduler)")
    args = p.parse_args(argv)
    print("| robot | fault | phase met | line printed | robot side |\n|---|---|---|---|---|", flush=True)
    runs = []
    for profile in args.profile or tuple(PROFILES):
        cases = [("none", "")] + [(f, ph) for f in FAULTS for ph in PHASES] + [("sender", "")]
        cases += [("mode_machine", "")] if profile == "g1" else []
        for fault, phase in cases:
            if (args.fault and fault not in args.fault) or (args.phase and phase and phase not in args.phase):
                continue
            for _ in range(args.tries):
                res = run_once(args, profile, fault, phase)
                m = measure(res)
                note = spoiled(res, m)
                if not note:
                    break
            print(row(res, m, note), flush=True)
            runs.append({"profile": profile, "fault": fault, "phase": phase, **m, "spoiled": note,
                         "load_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
                         "lines": [text for _t, text in res["lines"]]})
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
