"""The operator's sequence on a Unitree robot, as Unitree's own deploy programs run it:

    connect   wait for the first low state (none within ``connect_timeout_s``: one error line)
    damping   zero stiffness, damping on every joint the policy drives (the robot hangs or sags, nothing drives it);
              the remote's ``start`` (or ``s`` + Enter) goes on
    pose      the joints move from where they are to the policy's default pose over ``pose_s``, then hold it at the
              policy's gains; ``A`` (or ``a`` + Enter) starts the policy
    policy    the runtime (``deploy/runtime``: observation, policy, safety layer, fixed rate) with the velocity
              command from the remote's sticks
    estop     the remote's ``select`` (or ``e`` + Enter) at any time, a tilt past the safety layer's limit, or its
              watchdog before the policy runs: zero stiffness and damping, latched until the program ends
    end       the time is up or Ctrl-C: damping for ``end_damping_s``, then the program exits

Every change of state is one log line with the time since the start and the reason.
"""

from __future__ import annotations

import os
import select
import sys
import time
from dataclasses import dataclass
from typing import Any, Optional, TextIO
from collections.abc import Callable

import numpy as np

from contract import schema
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.loop import Runtime
from deploy.runtime.robot import JointCommand, RobotState
from deploy.runtime.safety import SafetyConfig
from deploy.unitree.remote import StickMap
from deploy.unitree.robot import UnitreeRobot
from contract.errors import UserError


@dataclass(frozen=True)
class OperatorConfig:
    """Timing and buttons of the sequence."""

    connect_timeout_s: float = 5.0
    """Longest wait for the first low state (s)."""
    pose_s: float = 3.0
    """Time to move from the measured pose to the default pose (s)."""
    policy_s: float = 3600.0
    """Longest time the policy runs (s); Ctrl-C ends it sooner."""
    end_damping_s: float = 1.0
    """Damping sent at the end before the program exits (s)."""
    start_button: str = "start"
    """Remote button: damping -> default pose (keyboard: s)."""
    run_button: str = "A"
    """Remote button: default pose -> policy (keyboard: a)."""
    stop_button: str = "select"
    """Remote button: e-stop at any time (keyboard: e)."""
    show_joints_s: float = 0.0
    """Before the policy runs, print every driven joint's measured position this often (s; 0: never): for the sign
    check joint by joint."""


class Keys:
    """Letters typed on the terminal (a letter and Enter), read from the file descriptor without blocking."""

    def __init__(self, stream: Optional[TextIO] = None):
        stream = stream if stream is not None else sys.stdin
        try:
            self.fd: Optional[int] = stream.fileno() if stream is not None else None
        except (OSError, ValueError):
            self.fd = None
        self.open = self.fd is not None
        """False once the input ended (or there is none)."""

    def poll(self) -> str:
        """The letters typed since the last call, lower case ('' when none)."""
        if self.fd is None or not self.open:
            return ""
        out = b""
        try:
            while select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, 256)
                if not chunk:
                    self.open = False
                    break
                out += chunk
        except (OSError, ValueError):
            self.open = False
        return "".join(c for c in out.decode(errors="ignore").lower() if c.isalpha())


class Sequence:
    """The sequence for one policy and one ``UnitreeRobot``; ``run()`` goes through it and returns a summary."""

    def __init__(self, policy: OnnxPolicy, robot: UnitreeRobot, cfg: OperatorConfig,
                 safety: Optional[SafetyConfig] = None, keys: Optional[Keys] = None,
                 out: Callable[[str], None] = print):
        self.cfg, self.robot = cfg, robot
        self.safety_cfg = safety or SafetyConfig()
        self.runtime = Runtime(policy, robot, self.safety_cfg)
        self.ctl = self.runtime.controller
        servos = schema.servos(policy.metadata, f"unitree: policy task {policy.metadata['task']!r}")
        self.pose = np.asarray(servos.pose, dtype=np.float64)
        self.kp, self.kd = np.asarray(servos.kp, dtype=np.float64), np.asarray(servos.kd, dtype=np.float64)
        self.sticks = StickMap(policy.metadata)
        self.names = list(policy.metadata["joint_names"]) + list(policy.metadata.get("held_joint_names", []))
        """The driven joints, in ``ctl.driven`` order."""
        self.keys = keys or Keys()
        self.out = out
        self.t0 = time.monotonic()
        self.state = "start"
        self.states: list[dict[str, Any]] = []
        """Every change of state: time (s), state, reason."""
        self._typed = ""

    def log(self, state: str, reason: str) -> None:
        t = time.monotonic() - self.t0
        self.state = state
        self.states.append({"t": round(t, 3), "state": state, "reason": reason})
        self.out(f"[{t:8.3f} s] {state}: {reason}")

    def _pressed(self, button: str, key: str) -> bool:
        self._typed += self.keys.poll()
        if key in self._typed:
            self._typed = self._typed.replace(key, "")
            return True
        return button in self.robot.remote.buttons

    def connect(self) -> RobotState:
        end = time.monotonic() + self.cfg.connect_timeout_s
        while (state := self.robot.read()) is None:
            if time.monotonic() > end:
                where = getattr(self.robot, "where", "")
                raise UserError(f"unitree: no low state on rt/lowstate within {self.cfg.connect_timeout_s:g} s "
                                f"({where}); is the robot on and in its debug mode (L2+R2 on the remote), and its "
                                "cable in that interface?")
            time.sleep(0.002)
        self.log("connected", f"first low state (tick {self.robot.tick} ms)")
        return state

    def _command(self, state: RobotState, target: Optional[np.ndarray], kp: np.ndarray, kd: np.ndarray
                 ) -> JointCommand:
        """Robot order: the driven joints get ``target`` (None: where they are), ``kp``, ``kd``; the rest idle."""
        q = np.asarray(state.joint_pos, dtype=np.float64)
        n, d = len(q), self.ctl.driven
        cmd = JointCommand(q.copy(), np.zeros(n), np.zeros(n), np.zeros(n))
        if target is not None:
            cmd.target[d] = target
        cmd.kp[d], cmd.kd[d] = kp, kd
        return cmd

    def damping_command(self, state: RobotState) -> JointCommand:
        return self._command(state, None, np.zeros_like(self.kd), self.safety_cfg.estop_kd_scale * self.kd)

    def _hold(self, command: Callable[[RobotState, float], JointCommand],
              done: Callable[[RobotState, float], bool], seconds: float = np.inf, checks: bool = True) -> str:
        """Write ``command(state, t)`` every control period until ``done`` ('done') or ``seconds`` pass ('time');
        with ``checks``, also until the stop button or the safety layer's watchdog or tilt ('estop', logged)."""
        period, start = self.runtime.period, time.monotonic()
        k = 0
        while True:
            now = time.monotonic()
            state = self.robot.read()
            if checks:
                self.ctl.safety.check(state, now)
                if self._pressed(self.cfg.stop_button, "e"):
                    self.log("estop", f"e-stop: {self.cfg.stop_button} on the remote (or e typed)")
                    return "estop"
                if self.ctl.safety.mode != "run":
                    self.log("estop", self.ctl.safety.reason)
                    return "estop"
            if state is None:
                return "no state"
            t = now - start
            self.robot.write(command(state, t))
            self._show(state, k)
            if done(state, t):
                return "done"
            if t >= seconds:
                return "time"
            k += 1
            time.sleep(max(0.0, start + k * period - time.monotonic()))

    def _show(self, state: RobotState, k: int) -> None:
        every = round(self.cfg.show_joints_s / self.runtime.period) if self.cfg.show_joints_s > 0 else 0
        if every and k % every == 0:
            q = np.asarray(state.joint_pos, dtype=np.float64)[self.ctl.driven]
            self.out("joints (rad): " + " ".join(f"{n}={x:+.3f}" for n, x in zip(self.names, q, strict=True)))

    def damping(self) -> str:
        self.log("damping", f"zero stiffness, kd x{self.safety_cfg.estop_kd_scale:g}; press {self.cfg.start_button} "
                 "on the remote (or type s + Enter) for the default pose")
        return self._hold(lambda s, _t: self.damping_command(s),
                          lambda _s, _t: self._pressed(self.cfg.start_button, "s"))

    def default_pose(self, state: RobotState) -> str:
        q0 = np.asarray(state.joint_pos, dtype=np.float64)[self.ctl.driven]
        self.log("pose", f"to the default pose over {self.cfg.pose_s:g} s at the policy's gains")

        def command(s: RobotState, t: float) -> JointCommand:
            a = min(1.0, t / self.cfg.pose_s) if self.cfg.pose_s > 0 else 1.0
            return self._command(s, q0 + a * (self.pose - q0), self.kp, self.kd)

        held = self._hold(command, lambda _s, t: t >= self.cfg.pose_s)
        if held != "done":
            return held
        self.log("pose", f"holding the default pose; press {self.cfg.run_button} on the remote (or type a + Enter) "
                 "to start the policy")
        return self._hold(command, lambda _s, _t: self._pressed(self.cfg.run_button, "a"))

    def policy(self) -> dict[str, Any]:
        ctl, robot = self.ctl, self.robot
        self.log("policy", "the policy runs; velocity from the remote's sticks")
        seen = ["run"]

        def on_tick(_t: float, _cmd: np.ndarray) -> None:
            if ctl.safety.mode == "run" and self._pressed(self.cfg.stop_button, "e"):
                ctl.safety.trip("estop", f"e-stop: {self.cfg.stop_button} on the remote (or e typed)")
            if ctl.safety.mode != seen[-1]:
                seen.append(ctl.safety.mode)
                self.log(ctl.safety.mode, ctl.safety.history[-1])

        return self.runtime.run(self.cfg.policy_s, lambda _t: self.sticks.command(robot.remote), on_tick=on_tick)

    def end(self) -> None:
        self.log("end", f"damping for {self.cfg.end_damping_s:g} s, then exit")
        self._hold(lambda s, _t: self.damping_command(s), lambda _s, _t: False, self.cfg.end_damping_s, checks=False)

    def run(self) -> dict[str, Any]:
        """The whole sequence; Ctrl-C at any point ends it with damping."""
        summary: dict[str, Any] = {}
        try:
            state = self.connect()
            step = self.damping()
            if step == "done":
                step = self.default_pose(self.robot.read() or state)
            if step == "done":
                summary = self.policy()
            elif step == "estop":  # latched until the time is up or Ctrl-C
                self._hold(lambda s, _t: self.damping_command(s), lambda _s, _t: False, self.cfg.policy_s,
                           checks=False)
        except KeyboardInterrupt:
            self.log("stop", "Ctrl-C")
        if self.states and self.states[0]["state"] == "connected":
            self.end()
        return {**summary, "states": self.states, "pid": os.getpid()}
