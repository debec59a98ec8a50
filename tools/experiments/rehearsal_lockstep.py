"""The rehearsal without its clock: ``deploy/simrobot.py``'s simulated robot and the runtime's controller stepped in
lock step (the command takes effect at the tick, no latency, no real time), to tell apart what moves a rehearsal
away from offline sim2sim.

Each SETTING is ``ACTUATION[+noise][+safety|+range]``: ACTUATION ``torque_pd`` (the rehearsal's 1 kHz torque PD)
or ``file`` (the scene's position servos at the training timestep); ``+noise`` the rehearsal's sensor noise (else
none); ``+safety`` the runtime's safety layer (``deploy/runtime/safety.py``), ``+range`` the same with every
target clipped at the joint ranges themselves (the runtime before commit 883784d); neither: the policy's targets
as they are. Prints, per setting, the forward distance, the mean linear tracking error from 2 s after the command
and the ticks on which the safety changed a target, by joint; ``--model FILE.xml`` simulates the maker's file
instead of the policy file's scene (``deploy/maker_model.py``). docs/deploy.md (step 3) quotes it:

    python -m tools.experiments.rehearsal_lockstep g1.onnx file torque_pd torque_pd+noise torque_pd+range
"""

from __future__ import annotations

import argparse

import numpy as np

from deploy.onnx_policy import OnnxPolicy
from deploy.rehearse import STAND_S, schedule
from deploy.runtime.controller import Controller
from deploy.runtime.robot import JointCommand
from deploy.simrobot import Noise, SimRobotConfig, SimulatedRobot

SCORE_FROM_S = 2.0
"""Tracking errors are averaged from this long after the command starts (the rehearsal's ``score_from_s``)."""


def _setting(text: str) -> tuple[str, str, bool, str]:
    parts = text.split("+")
    extra = set(parts[1:])
    if parts[0] not in ("torque_pd", "file") or not extra <= {"noise", "safety", "range"} or {"safety",
                                                                                              "range"} <= extra:
        raise argparse.ArgumentTypeError(f"{text!r}: ACTUATION[+noise][+safety|+range], ACTUATION torque_pd or file "
                                         "(e.g. torque_pd+noise+safety)")
    safety = "range" if "range" in extra else "safety" if "safety" in extra else "none"
    return text, parts[0], "noise" in extra, safety


def run(policy_file: str, seconds: float, command: tuple[float, float, float], actuation: str, noise: bool,
        safety: str, model: str = "") -> dict[str, object]:
    """One lock-step run: forward distance (m), mean linear tracking error (m/s), whether it fell, the ticks on
    which the safety changed a target, per joint. ``model``: the rehearsal's ``--model`` (torque_pd only)."""
    cfg = SimRobotConfig(policy=policy_file, seconds=seconds, actuation=actuation,
                         noise=Noise() if noise else Noise(0.0, 0.0, 0.0, 0.0, 0.0, 0.0), model=model)
    robot = SimulatedRobot(cfg)
    policy = OnnxPolicy(policy_file)
    ctl = Controller(policy, robot.joint_names)
    s = ctl.safety
    if safety == "range":
        ranges = np.array([[-np.inf if lo is None else lo, np.inf if hi is None else hi]
                           for lo, hi in list(policy.metadata["joint_pos_limits"]) + [[None, None]] * len(s.hold)])
        s.low, s.high = ranges[:, 0], ranges[:, 1]
    names = list(policy.metadata["joint_names"]) + list(policy.metadata.get("held_joint_names", []))
    changed = np.zeros(len(names), dtype=int)
    commands, dt = schedule(command), float(policy.metadata["control_dt"])
    per_tick = round(dt / robot.dt)
    start, lin, fell = robot.data.qpos[robot.bq], [], False
    for k in range(int(round(seconds / dt))):
        t = k * dt
        state, cmd = robot.sample(t), commands(t)
        action = ctl.infer(ctl.observe(state, cmd))
        wanted = np.concatenate([ctl.default + ctl.scale * action, s.hold])
        if safety == "none":
            out = JointCommand(np.asarray(state.joint_pos, dtype=np.float64).copy(), np.zeros(ctl.n_robot),
                               np.zeros(ctl.n_robot), np.zeros(ctl.n_robot))
            out.target[ctl.driven], out.kp[ctl.driven], out.kd[ctl.driven] = wanted, s.kp, s.kd
        else:
            out = ctl.command(state, action)  # type: ignore[assignment]
            changed += ~np.isclose(out.target[ctl.driven], wanted)
        robot.command = out
        for _ in range(per_tick):
            robot.step()
        if robot.fallen():
            fell = True
            break
        if t >= STAND_S + SCORE_FROM_S:
            v, _, _ = robot.truth()
            lin.append(float(np.linalg.norm(cmd[:2] - v[:2])))
    return {"forward_m": float(robot.data.qpos[robot.bq] - start), "lin_err": float(np.mean(lin)) if lin else None,
            "fell": fell, "changed": {names[i]: int(c) for i, c in enumerate(changed) if c}}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m tools.experiments.rehearsal_lockstep", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("policy", help="exported ONNX policy (play.py --export-onnx)")
    p.add_argument("settings", nargs="+", type=_setting, metavar="SETTING")
    p.add_argument("--seconds", type=float, default=20.0, help="length of each run (s)")
    p.add_argument("--command", default="0.5,0,0", help="vx,vy,yaw_rate after the first second")
    p.add_argument("--model", default="", help="an MJCF of the robot to simulate instead of the policy file's scene "
                                               "(the maker's file; torque_pd settings only)")
    args = p.parse_args(argv)
    vx, vy, yaw = (float(x) for x in args.command.split(","))
    command = (vx, vy, yaw)
    for text, actuation, noise, safety in args.settings:
        r = run(args.policy, args.seconds, command, actuation, noise, safety, args.model)
        print(f"{text}: forward {r['forward_m']:.2f} m, lin. error "
              f"{'-' if r['lin_err'] is None else format(r['lin_err'], '.3f')} m/s, fell {r['fell']}, "
              f"targets changed by the safety (ticks per joint): {r['changed'] or 'none'}", flush=True)


if __name__ == "__main__":
    main()
