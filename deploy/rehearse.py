"""Rehearse a hardware trial: the robot-side runtime drives the simulated robot in real time over UDP.

    python -m deploy.rehearse policy.onnx [--out DIR] [--seconds 10] [--latencies 0,10,20,30,40]
                              [--command 0.5,0,0] [--actuation torque_pd|file] [--quick] [--repeats N]
                              [--rt-priority 50] [--transport udp|unitree-dds] [--robot unitree_go2|unitree_g1]
                              [--supplies simulated|low-state] [--model FILE.xml]

Each setting starts ``deploy/simrobot.py`` in its own process (torque PD at 1 kHz, sensor noise, joints in
another order than the policy's) and runs ``deploy/runtime`` against it for ``--seconds``: standing still for
``STAND_S``, then the ``--command`` (vx, vy in m/s, yaw rate in rad/s). The sweep, one change at a time from the
nominal robot: total latency 0-40 ms (half on the sensor path, half on the command path), motor strength
-/+20% (torque and its limit), stiffness kp -/+20%, damping kd x0.5 / x2, friction x0.5 / x1.5, added base mass
+10% / +20% of the robot's mass. A setting *walks* when the robot did not fall, the runtime stayed in ``run`` (no
watchdog, no e-stop) and the mean tracking errors stayed within ``--walk-error`` and ``--walk-yaw-error``; a run
cut short by the computer (a missed deadline tripped the watchdog, or the simulated robot fell more than
``MACHINE_LAG_MS`` behind real time) is marked *stalled machine* and counts neither way. The largest latency that
walks is the largest one of the sweep with every smaller one walking too (``--repeats N``: every run of it).
``--supplies low-state`` rehearses a robot whose low state carries the joint state and the IMU only (a Unitree
Go2 or G1): the simulated robot then sends no base velocity, and a policy that observes one (or a height scan) is
refused in one line before anything starts (``deploy/runtime/supply.py``). ``offline`` is today's sim2sim loop
(``deploy/sim2sim.py``: the file's position servos at the training timestep, no real time, no latency, no noise)
on the same command.

``--transport unitree-dds`` swaps the UDP link for Unitree's DDS topics: the simulated robot speaks them
(``deploy/unitree/simrobot.py``, DDS on loopback) and the runtime reaches it through ``UnitreeRobot``, the adapter a
real robot gets, with the command from the wireless remote the simulated robot plays.

The simulated robot is the scene the policy was trained on (the policy file's ``scene_mjb``: a policy of
``menagerie:unitree_go2:deploy`` rehearses on that Go2's model). ``--model FILE.xml`` simulates another model of
the robot instead, the maker's file (``deploy/maker_model.py``: its joints by name, a floor added when it has none;
``--actuation torque_pd`` only); ``offline`` stays on the policy file's scene.

Writes ``DIR/rehearsal.json``, ``DIR/rehearsal.png`` and each run's per-tick timing ``DIR/ticks/NAME.csv``;
prints a markdown table (docs/deploy.md shows the default policy's).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import select
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import numpy as np

from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.loop import Runtime, realtime
from deploy.runtime.safety import SafetyConfig
from deploy.runtime.supply import PROFILES, check
from deploy.runtime.udp import UdpRobot
from deploy.simrobot import SimRobotConfig, robot_joints

STAND_S = 1.0
"""The command is zero for this long at the start of every run (s)."""
START_TIMEOUT_S = 30.0
"""Longest wait for the simulated robot's READY line (s)."""
LATENCIES_MS = (0.0, 10.0, 20.0, 30.0, 40.0)
"""Default latency sweep (ms, total of both paths)."""


def schedule(command: tuple[float, float, float]):  # noqa: ANN201 - a closure
    """``commands(t)``: zero for ``STAND_S``, then ``command``."""
    moving = np.asarray(command, dtype=np.float64)
    still = np.zeros(3)
    return lambda t: still if t < STAND_S else moving


class UdpTransport:
    """The rehearsal's own link: ``deploy/simrobot.py`` behind UDP on loopback, the command sent along for scoring."""

    module = "deploy.simrobot"

    def __init__(self, policy: OnnxPolicy, sim: SimRobotConfig):
        self.policy, self.sim = policy, sim
        self.robot: Optional[UdpRobot] = None

    def config(self) -> str:
        return self.sim.to_json()

    def env(self) -> Optional[dict[str, str]]:
        return None

    def connect(self, port: int) -> UdpRobot:
        self.robot = UdpRobot(self.sim.sdk_order or robot_joints(self.policy.metadata), ("127.0.0.1", port))
        return self.robot

    def commands(self, scheduled: Callable[[float], np.ndarray]) -> Callable[[float], np.ndarray]:
        return scheduled

    def on_tick(self, _t: float, cmd: np.ndarray) -> None:
        assert self.robot is not None
        self.robot.reference = cmd

    def stop(self, _proc: subprocess.Popen) -> None:
        assert self.robot is not None
        self.robot.quit()

    def close(self) -> None:
        if self.robot is not None:
            self.robot.close()


TRANSPORTS = ("udp", "unitree-dds")
"""``--transport``: our UDP link, or Unitree's DDS topics through the adapter a real robot gets."""


def rehearse_one(policy_path: str | Path, sim: SimRobotConfig, seconds: float, command: tuple[float, float, float],
                 safety: Optional[SafetyConfig] = None, log_csv: Optional[Path] = None,
                 policy: Optional[OnnxPolicy] = None, transport: str = "udp",
                 profile: Optional[str] = None) -> dict[str, Any]:
    """One real-time run: the simulated robot in a child process (killed in any case), the runtime here.
    Returns the runtime's timing summary and safety mode with the robot's report. ``transport="unitree-dds"``:
    the simulated robot speaks Unitree's DDS (``deploy/unitree/simrobot.py``, robot ``profile``) and the runtime
    drives it through ``deploy.unitree.robot.UnitreeRobot``, the velocity command from its wireless remote."""
    policy = policy or OnnxPolicy(policy_path, threads=1)
    sim = dataclasses.replace(sim, policy=str(policy_path), seconds=seconds + 5.0)
    link: Any
    if transport == "unitree-dds":
        from deploy.unitree.rehearsal import DdsTransport

        link = DdsTransport(policy, sim, command, STAND_S, profile)
    elif transport == "udp":
        link = UdpTransport(policy, sim)
    else:
        raise UserError(f"--transport={transport} is not allowed; expected one of {', '.join(TRANSPORTS)}")
    proc = subprocess.Popen([sys.executable, "-m", link.module, link.config()], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
                            env=link.env())
    try:
        robot = link.connect(_ready_port(proc))
        runtime = Runtime(policy, robot, safety)
        timing = runtime.run(seconds, link.commands(schedule(command)), on_tick=link.on_tick)
        link.stop(proc)
        out, err = proc.communicate(timeout=30)
        if proc.returncode != 0:
            raise RuntimeError(f"simulated robot failed: {err.strip().splitlines()[-1:] or proc.returncode}")
        report = json.loads(out.strip().splitlines()[-1])
        if log_csv is not None:
            runtime.log.write_csv(log_csv)
        return {"runtime": timing, "robot": report}
    finally:
        link.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def _ready_port(proc: subprocess.Popen) -> int:
    assert proc.stdout is not None
    end = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("READY "):
                return int(line.split()[1])
            if not line and proc.poll() is not None:
                err = proc.stderr.read() if proc.stderr else ""
                raise UserError(f"rehearse: the simulated robot did not start: {err.strip().splitlines()[-1:]}")
    raise RuntimeError(f"rehearse: the simulated robot sent no READY within {START_TIMEOUT_S:g} s")


def robot_mass(policy: OnnxPolicy) -> float:
    from deploy.sim2sim import load_scene

    model = load_scene(policy.metadata)
    base = model.joint(policy.metadata["base_joint"])
    root = model.body_rootid[model.jnt_bodyid[base.id]]
    return float(sum(model.body_mass[b] for b in range(model.nbody) if model.body_rootid[b] == root))


def sweep(policy: OnnxPolicy, latencies_ms: tuple[float, ...], quick: bool) -> list[tuple[str, str, float, dict]]:
    """``(name, group, value, SimRobotConfig changes)`` of every setting."""
    mass = robot_mass(policy)
    rows: list[tuple[str, str, float, dict]] = []
    for ms in latencies_ms:
        name = "nominal" if ms == 0 else f"latency {ms:g} ms"
        rows.append((name, "latency_ms", ms, {"sensor_latency_s": ms / 2000, "command_latency_s": ms / 2000}))
    if quick:
        return rows
    for f in (0.8, 1.2):
        rows.append((f"motor strength x{f:g}", "motor_strength", f, {"motor_strength": f}))
    for f in (0.8, 1.2):
        rows.append((f"kp x{f:g}", "kp_scale", f, {"kp_scale": f}))
    for f in (0.5, 2.0):
        rows.append((f"kd x{f:g}", "kd_scale", f, {"kd_scale": f}))
    for f in (0.5, 1.5):
        rows.append((f"friction x{f:g}", "friction", f, {"friction_scale": f}))
    for share in (0.1, 0.2):
        kg = round(share * mass, 2)
        rows.append((f"added mass +{kg:g} kg", "added_mass_kg", kg, {"added_mass_kg": kg}))
    ms = min(max(latencies_ms), 40.0)
    rows.append((f"all at once: {ms:g} ms, strength x0.8, friction x0.5, +{round(0.2 * mass, 2):g} kg", "combined", ms,
                 {"sensor_latency_s": ms / 2000, "command_latency_s": ms / 2000, "motor_strength": 0.8,
                  "friction_scale": 0.5, "added_mass_kg": round(0.2 * mass, 2)}))
    return rows


def offline(policy: OnnxPolicy, seconds: float, command: tuple[float, float, float], score_from_s: float
            ) -> dict[str, Any]:
    """Today's sim2sim loop on the same command: position servos at the training timestep, no real time."""
    from deploy.sim2sim import PlainMujocoRobot

    robot = PlainMujocoRobot(policy.metadata)
    robot.reset(0.0)
    policy.reset()
    commands = schedule(command)
    dt = policy.metadata["control_dt"]
    lin, yaw = [], []
    fell_at = None
    start = robot.base_xy()
    for k in range(int(round(seconds / dt))):
        robot.commands = commands(k * dt)
        robot.act(policy(robot.observe())[0])
        if robot.fell():
            fell_at = (k + 1) * dt
            break
        if (k + 1) * dt >= STAND_S + score_from_s:
            v, w, _ = robot.body_frame()
            lin.append(float(np.linalg.norm(robot.commands[:2] - v[:2])))
            yaw.append(float(abs(robot.commands[2] - w[2])))
    xy = robot.base_xy() - start
    return {"fell": fell_at is not None, "fall_time_s": fell_at,
            "lin_vel_tracking_error": float(np.mean(lin)) if lin else None,
            "yaw_rate_tracking_error": float(np.mean(yaw)) if yaw else None, "forward_m": float(xy[0]),
            "distance_m": float(np.hypot(*xy))}


def walks(report: dict[str, Any], mode: str, walk_error: float, walk_yaw_error: float) -> bool:
    """Did not fall, the runtime stayed in ``run``, and both tracking errors are within the limits."""
    lin, yaw = report["lin_vel_tracking_error"], report["yaw_rate_tracking_error"]
    return (not report["fell"] and mode == "run" and lin is not None and lin <= walk_error and yaw is not None
            and yaw <= walk_yaw_error)


MACHINE_LAG_MS = 20.0
"""A run whose simulated robot fell this far behind real time says more about the machine than the policy."""


def machine_stalled(row: dict[str, Any]) -> bool:
    """The run was cut short by the computer, not the policy: a missed deadline tripped the watchdog, or the
    simulated robot could not keep real time. Such runs count neither way (rerun them)."""
    return "missed deadline" in row["runtime"]["reason"] or row["robot"]["max_lag_ms"] > MACHINE_LAG_MS


def largest_walking_latency(rows: list[dict[str, Any]]) -> Optional[float]:
    """The largest latency of the sweep at which every run walked, as at every smaller one (None: not even 0);
    runs the machine stalled are left out."""
    best = None
    for value in sorted({r["value"] for r in rows if r["group"] == "latency_ms"}):
        judged = [r for r in rows if r["group"] == "latency_ms" and r["value"] == value and not r["machine_stalled"]]
        if not judged or not all(r["walks"] for r in judged):
            break
        best = value
    return best


def table(result: dict[str, Any]) -> str:
    """The markdown table of a rehearsal."""
    lines = ["| setting | walks | fell at (s) | lin. error (m/s) | yaw error (rad/s) | forward (m) | inference p99 "
             "(ms) | tick p99 (ms) | missed deadlines | runtime mode | robot behind real time, max (ms) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def f(x: Any, fmt: str = ".3f") -> str:
        return "-" if x is None else format(x, fmt)

    for row in result["settings"]:
        r, t = row["robot"], row["runtime"]
        verdict = "stalled machine" if row["machine_stalled"] else "yes" if row["walks"] else "no"
        lines.append(f"| {row['name']} | {verdict} | {f(r['fall_time_s'], '.2f')} | "
                     f"{f(r['lin_vel_tracking_error'])} | {f(r['yaw_rate_tracking_error'])} | {r['forward_m']:.2f} | "
                     f"{f(t.get('inference_ms', {}).get('p99'), '.2f')} | "
                     f"{f(t.get('total_ms', {}).get('p99'), '.2f')} | "
                     f"{t['missed_deadlines']} | {t['mode']} | {r['max_lag_ms']:.1f} |")
    o = result.get("offline")
    if o:
        lines.append(f"| offline sim2sim (no real time) | {'yes' if o['walks'] else 'no'} | "
                     f"{f(o['fall_time_s'], '.2f')} "
                     f"| {f(o['lin_vel_tracking_error'])} | {f(o['yaw_rate_tracking_error'])} | {o['forward_m']:.2f} "
                     "| - | - | - | - | - |")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warnings.filterwarnings("ignore", "Mean of empty slice")  # a run that fell before its scoring began
    rows = result["settings"]
    lat = [r for r in rows if r["group"] == "latency_ms"]
    other = [r for r in rows if r["group"] != "latency_ms"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.4), gridspec_kw={"width_ratios": [1, 1.6]})

    def err(r: dict[str, Any], key: str = "lin_vel_tracking_error") -> float:
        e = r["robot"][key]
        return float("nan") if e is None else e

    ax = axes[0]
    x = sorted({r["value"] for r in lat})  # repeats: their mean, red x when any of them does not walk
    runs = [[r for r in lat if r["value"] == v and not r.get("machine_stalled")] or
            [r for r in lat if r["value"] == v] for v in x]
    lin = [float(np.nanmean([err(r) for r in g])) for g in runs]
    ax.plot(x, lin, "o-", color="tab:blue", label="linear (m/s)")
    ax.plot(x, [float(np.nanmean([err(r, "yaw_rate_tracking_error") for r in g])) for g in runs], "s-",
            color="tab:orange", label="yaw rate (rad/s)")
    for v, e, g in zip(x, lin, runs, strict=True):
        if not all(r["walks"] for r in g):
            ax.plot(v, e if np.isfinite(e) else 0.0, "x", color="tab:red", ms=12, mew=2)
    ax.axhline(result["walk_error"], color="tab:blue", ls="--", lw=1)
    ax.axhline(result["walk_yaw_error"], color="tab:orange", ls="--", lw=1)
    ax.set_xlabel("total latency (ms)")
    ax.set_ylabel("tracking error; dashed: walk limits")
    ax.set_title("latency sweep (x: does not walk)")
    ax.legend()
    ax = axes[1]  # one bar per setting: the mean over its runs the machine did not stall
    settings: dict[str, list[dict[str, Any]]] = {"nominal": runs[0] if runs else []}
    for r in other:
        settings.setdefault(r["name"].split(" #")[0], []).append(r)
    names, values, colors = [], [], []
    for name, group in settings.items():
        judged = [r for r in group if not r.get("machine_stalled")] or group
        names.append(textwrap.fill(name, 26))
        values.append(float(np.nanmean([err(r) for r in judged])))
        colors.append("tab:blue" if all(r["walks"] for r in judged) else "tab:red")
    ax.barh(names, np.nan_to_num(values), color=colors)
    ax.tick_params(axis="y", labelsize=8)
    ax.axvline(result["walk_error"], color="grey", ls="--", lw=1)
    ax.set_xlabel("velocity tracking error (m/s), mean over runs; red: fell or stopped")
    ax.invert_yaxis()
    fig.suptitle(f"{result['task']}: real-time rehearsal, {result['seconds']:g} s per setting, command "
                 f"{result['command']}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m deploy.rehearse", description=__doc__.splitlines()[0])
    p.add_argument("policy", help="exported ONNX policy (play.py --export-onnx)")
    p.add_argument("--out", default="rehearsal", help="output folder (default: ./rehearsal)")
    p.add_argument("--seconds", type=float, default=10.0, help="real-time length of each setting (s)")
    p.add_argument("--latencies", default=",".join(f"{x:g}" for x in LATENCIES_MS),
                   help="total latencies to sweep (ms, comma-separated)")
    p.add_argument("--command", default="0.5,0,0", help="vx,vy,yaw_rate after the first second (m/s, m/s, rad/s)")
    p.add_argument("--actuation", default="torque_pd", choices=("torque_pd", "file"),
                   help="the simulated motors: a 1 kHz torque PD, or the scene's position servos")
    p.add_argument("--walk-error", type=float, default=0.25,
                   help="largest linear velocity tracking error that still walks (m/s)")
    p.add_argument("--walk-yaw-error", type=float, default=0.5,
                   help="largest yaw rate tracking error that still walks (rad/s)")
    p.add_argument("--quick", action="store_true", help="the latency sweep only")
    p.add_argument("--repeats", type=int, default=1,
                   help="runs per setting (noise seeds 0, 1, ...); a latency walks when every run of it walks")
    p.add_argument("--transport", default="udp", choices=TRANSPORTS,
                   help="udp: our loopback link; unitree-dds: Unitree's low-level DDS topics through the adapter a "
                        "real robot gets (deploy/unitree; pip install -e '.[unitree]')")
    p.add_argument("--robot", default=None,
                   help="unitree-dds: robot profile (unitree_go2, unitree_g1; default: the one naming the policy's "
                        "joints)")
    p.add_argument("--supplies", default="simulated", choices=tuple(PROFILES),
                   help="what the simulated robot sends: simulated (joint state, IMU, a base velocity estimate and "
                        "heights) or low-state (joint state and IMU only, as a Unitree low state); a policy that "
                        "observes more is refused")
    p.add_argument("--model", default="",
                   help="an MJCF of the robot to simulate instead of the policy file's scene (the maker's file)")
    p.add_argument("--rt-priority", type=int, default=0,
                   help="SCHED_FIFO priority (1-99) of the runtime and the simulated robot, as on a robot computer "
                        "(needs root or CAP_SYS_NICE); 0: the normal scheduler")
    return p


def main(argv: Optional[list[str]] = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    try:
        latencies = tuple(float(x) for x in args.latencies.split(","))
        command = tuple(float(x) for x in args.command.split(","))
    except ValueError:
        raise UserError("--latencies and --command take comma-separated numbers") from None
    if len(command) != 3:
        raise UserError(f"--command={args.command} is not allowed; expected vx,vy,yaw_rate")
    if not all(0 <= x <= 1000 for x in latencies) or args.seconds <= STAND_S + 1:
        raise UserError("--latencies must be within [0, 1000] ms and --seconds more than 2")
    policy = OnnxPolicy(args.policy, threads=1)
    supplies = PROFILES[args.supplies]
    check(policy.metadata, supplies, "rehearse")
    out = Path(args.out)
    names = sorted(robot_joints(policy.metadata))  # a robot whose SDK orders its joints otherwise
    if args.repeats < 1:
        raise UserError(f"--repeats={args.repeats} is not allowed; expected a positive integer")
    if not 0 <= args.rt_priority <= 99:
        raise UserError(f"--rt-priority={args.rt_priority} is not allowed; expected an integer in [0, 99]")
    if args.transport == "unitree-dds":
        from deploy.unitree.dds import require
        from deploy.unitree.profiles import for_policy

        require()
        for_policy(policy.metadata, args.robot)  # a policy no profile drives: one line before anything runs
    if args.model:  # a file that does not fit the policy: one line before anything starts
        from deploy.maker_model import maker_scene
        from deploy.sim2sim import load_scene

        if args.actuation != "torque_pd":
            raise UserError(f"--model needs --actuation torque_pd, not {args.actuation}")
        maker_scene(args.model, policy.metadata, load_scene(policy.metadata))
    locked = realtime(args.rt_priority) if args.rt_priority else False
    base = SimRobotConfig(policy=str(args.policy), actuation=args.actuation, sdk_order=tuple(names), model=args.model,
                          base_velocity="estimator" in supplies.sources,
                          rt_priority=max(1, args.rt_priority - 1) if args.rt_priority else 0)
    # the simulated robot one priority below the runtime: a physics burst must not delay a tick
    rows = []
    runs = [(f"{name} #{k + 1}" if args.repeats > 1 else name, group, value, {**changes, "seed": k})
            for name, group, value, changes in sweep(policy, latencies, args.quick) for k in range(args.repeats)]
    for name, group, value, changes in runs:
        slug = name.replace(" ", "_").replace("+", "").replace("#", "").replace(":", "").replace(",", "")
        row = rehearse_one(args.policy, dataclasses.replace(base, **changes), args.seconds, command,
                           log_csv=out / "ticks" / f"{slug}.csv", policy=policy, transport=args.transport,
                           profile=args.robot)
        row.update(name=name, group=group, value=value)
        row["walks"] = walks(row["robot"], row["runtime"]["mode"], args.walk_error, args.walk_yaw_error)
        row["machine_stalled"] = machine_stalled(row)
        rows.append(row)
        r = row["robot"]
        print(f"{name}: walks={row['walks']} fell={r['fell']} lin_err={r['lin_vel_tracking_error']} "
              f"missed={row['runtime']['missed_deadlines']} mode={row['runtime']['mode']}", file=sys.stderr)
    off = offline(policy, args.seconds, command, base.score_from_s)
    off["walks"] = walks(off, "run", args.walk_error, args.walk_yaw_error)
    inference = [r["runtime"]["inference_ms"]["p99"] for r in rows if "inference_ms" in r["runtime"]]
    result = {"policy": str(args.policy), "task": policy.metadata["task"], "seconds": args.seconds,
              "command": list(command), "actuation": args.actuation, "transport": args.transport,
              "supplies": supplies.name, "model": args.model or "the policy file's scene",
              "walk_error": args.walk_error,
              "walk_yaw_error": args.walk_yaw_error,
              "rt_priority": args.rt_priority, "memory_locked": locked,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "load_avg_at_end": os.getloadavg(),
              "settings": rows, "offline": off, "largest_walking_latency_ms": largest_walking_latency(rows),
              "inference_p99_ms_worst": max(inference) if inference else None,
              "missed_deadlines": sum(r["runtime"]["missed_deadlines"] for r in rows)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "rehearsal.json").write_text(json.dumps(result, indent=1))
    plot(result, out / "rehearsal.png")
    print(table(result))
    print(f"largest latency that still walks: {result['largest_walking_latency_ms']} ms; "
          f"worst inference p99 {result['inference_p99_ms_worst']} ms; missed deadlines {result['missed_deadlines']}")
    return result


if __name__ == "__main__":
    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
