"""The operator's sequence on a Unitree robot, as Unitree's own deploy programs run it:

    connect   wait for the first fresh low state (none within ``connect_timeout_s``: one error line), then listen
              ``listen_s`` on ``rt/lowcmd``: another process sending there (the robot's sport mode, another
              program) refuses the start in one line, nothing sent
    damping   zero stiffness, damping on every joint the policy drives (the robot hangs or sags, nothing drives it);
              the remote's ``start`` (or ``s`` + Enter) goes on
    pose      the joints move from where they are to the policy's default pose over ``pose_s``
    hold      the default pose held at the policy's gains; ``A`` (or ``a`` + Enter) starts the policy
    policy    the runtime (``deploy/runtime``: observation, policy, safety layer, fixed rate) with the velocity
              command from the remote's sticks
    estop     the remote's ``select`` (or ``e`` + Enter) at any time, a tilt past the safety layer's limit, or no
              fresh low state (lost, frozen, wrong CRC, NaN: ``freshness.py`` and the safety layer's watchdog, in
              every phase): zero stiffness and damping, latched until the program ends
    end       the time is up or Ctrl-C: damping for ``end_damping_s``, then the program exits

Every change of state is one log line with the time since the start and the reason (a fault's names it). Every
command passes ``continuity.StepGuard``: no driven joint's target moves more than the safety layer's rate limit
allows in one control period, across every change of phase, and the first stiff command after damping starts at
the measured position.
"""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional, TextIO

import numpy as np

from contract import schema
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.loop import Runtime
from deploy.runtime.robot import JointCommand, RobotState
from deploy.runtime.safety import SafetyConfig
from deploy.unitree.continuity import StepGuard
from deploy.unitree.remote import StickMap
from deploy.unitree.robot import UnitreeRobot


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
    listen_s: float = 0.5
    """Before the first command, listen this long on rt/lowcmd (s): a command from another process refuses the start
    (Unitree's low-level commands come at 500 Hz, so even one silent period is a sender switched off)."""
    first_offset: float = 0.02
    """The first stiff command after damping targets within this of the measured position (rad)."""


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


class _Guarded:
    """The robot as the runtime sees it, each command through the sequence's ``StepGuard``."""

    def __init__(self, robot: UnitreeRobot, guard: StepGuard, phase: Callable[[], str]):
        self.robot, self.guard, self.phase = robot, guard, phase
        self.q: Optional[np.ndarray] = None
        """The measured positions of the last sample read (robot order)."""

    @property
    def joint_names(self) -> Any:
        return self.robot.joint_names

    def clock(self) -> float:
        return self.robot.clock()

    def read(self) -> Optional[RobotState]:
        state = self.robot.read()
        if state is not None:
            self.q = np.asarray(state.joint_pos, dtype=np.float64)
        return state

    def write(self, command: JointCommand) -> None:
        q = self.q if self.q is not None else np.asarray(command.target, dtype=np.float64)
        self.robot.write(self.guard.apply(command, q, self.phase()))


class Sequence:
    """The sequence for one policy and one ``UnitreeRobot``; ``run()`` goes through it and returns a summary."""

    def __init__(self, policy: OnnxPolicy, robot: UnitreeRobot, cfg: OperatorConfig,
                 safety: Optional[SafetyConfig] = None, keys: Optional[Keys] = None,
                 out: Callable[[str], None] = print):
        self.cfg, self.robot = cfg, robot
        self.safety_cfg = safety or SafetyConfig(stale_mode="estop")
        self.state = "start"
        self.io = _Guarded(robot, StepGuard(np.zeros(0, dtype=int), 0.0, 0.0), lambda: self.state)
        self.runtime = Runtime(policy, self.io, self.safety_cfg)
        self.ctl = self.runtime.controller
        self.guard = StepGuard(self.ctl.driven, self.safety_cfg.max_target_rate * self.runtime.period,
                               cfg.first_offset)
        """Every command's target steps (``continuity.py``): at most the rate limit's step per control period."""
        self.io.guard = self.guard
        servos = schema.servos(policy.metadata, f"unitree: policy task {policy.metadata['task']!r}")
        self.pose = np.asarray(servos.pose, dtype=np.float64)
        self.kp, self.kd = np.asarray(servos.kp, dtype=np.float64), np.asarray(servos.kd, dtype=np.float64)
        self.sticks = StickMap(policy.metadata)
        self.names = list(policy.metadata["joint_names"]) + list(policy.metadata.get("held_joint_names", []))
        """The driven joints, in ``ctl.driven`` order."""
        self.keys = keys or Keys()
        self.out = out
        self.t0 = time.monotonic()
        self.states: list[dict[str, Any]] = []
        """Every change of state: time (s), state, reason."""
        self._typed = ""

    def log(self, state: str, reason: str) -> None:
        t = time.monotonic() - self.t0
        self.state = state
        self.states.append({"t": round(t, 3), "state": state, "reason": reason})
        self.out(f"[{t:8.3f} s] {state}: {reason}")

    def _why(self, reason: str) -> str:
        """The safety layer's reason, with the low states' fault where the watchdog saw no fresh one."""
        gate = getattr(self.robot, "gate", None)
        if gate is not None and ("no new sensor sample" in reason or "sensor data stopped" in reason):
            return f"{reason} ({gate.cause()})"
        return reason

    def _pressed(self, button: str, key: str) -> bool:
        self._typed += self.keys.poll()
        if key in self._typed:
            self._typed = self._typed.replace(key, "")
            return True
        return button in self.robot.remote.buttons

    def connect(self) -> RobotState:
        end = time.monotonic() + self.cfg.connect_timeout_s
        while (state := self.io.read()) is None:
            if time.monotonic() > end:
                where = getattr(self.robot, "where", "")
                gate = getattr(self.robot, "gate", None)
                if gate is not None and gate.dropped():
                    raise UserError(f"unitree: no fresh low state on rt/lowstate within {self.cfg.connect_timeout_s:g}"
                                    f" s ({where}): {gate.cause()}")
                raise UserError(f"unitree: no low state on rt/lowstate within {self.cfg.connect_timeout_s:g} s "
                                f"({where}); is the robot on and in its debug mode (L2+R2 on the remote), and its "
                                "cable in that interface?")
            time.sleep(0.002)
        others = getattr(self.robot, "other_senders", None)
        heard = others(self.cfg.listen_s) if others is not None and self.cfg.listen_s > 0 else 0
        if heard:
            raise UserError(f"unitree: another process is sending rt/lowcmd ({heard} command(s) in "
                            f"{self.cfg.listen_s:g} s); nothing sent: switch the robot's sport mode off (the app, or "
                            "L2+R2 on the remote for the debug mode) and stop any other low-level program")
        self.log("connected", f"first low state (tick {self.robot.tick} ms); no other sender on rt/lowcmd for "
                 f"{self.cfg.listen_s:g} s")
        return self.io.read() or state

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
            state = self.io.read()
            if checks:
                self.ctl.safety.check(state, now)
                if self._pressed(self.cfg.stop_button, "e"):
                    self.log("estop", f"e-stop: {self.cfg.stop_button} on the remote (or e typed)")
                    return "estop"
                if self.ctl.safety.mode != "run":
                    self.log("estop", self._why(self.ctl.safety.reason))
                    return "estop"
            if state is None:
                return "no state"
            t = now - start
            self.io.write(command(state, t))
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

    def default_pose(self) -> str:
        self.log("pose", f"to the default pose over {self.cfg.pose_s:g} s at the policy's gains")
        start: list[np.ndarray] = []

        def move(s: RobotState, t: float) -> JointCommand:
            if not start:  # from where the joints are at the first stiff command
                start.append(np.asarray(s.joint_pos, dtype=np.float64)[self.ctl.driven])
            q0 = start[0]
            a = min(1.0, t / self.cfg.pose_s) if self.cfg.pose_s > 0 else 1.0
            return self._command(s, q0 + a * (self.pose - q0), self.kp, self.kd)

        held = self._hold(move, lambda _s, t: t >= self.cfg.pose_s)
        if held != "done":
            return held
        self.log("hold", f"holding the default pose; press {self.cfg.run_button} on the remote (or type a + Enter) "
                 "to start the policy")
        return self._hold(lambda s, _t: self._command(s, self.pose, self.kp, self.kd),
                          lambda _s, _t: self._pressed(self.cfg.run_button, "a"))

    def policy(self) -> dict[str, Any]:
        ctl, robot = self.ctl, self.robot
        self.log("policy", "the policy runs; velocity from the remote's sticks")
        if self.guard.last is not None:
            ctl.safety.last_target = self.guard.last.copy()  # the rate limit goes on from the held pose
        seen = ["run"]

        def on_tick(_t: float, _cmd: np.ndarray) -> None:
            if ctl.safety.mode != "estop" and self._pressed(self.cfg.stop_button, "e"):  # from a stance too
                ctl.safety.trip("estop", f"e-stop: {self.cfg.stop_button} on the remote (or e typed)")
            if ctl.safety.mode != seen[-1]:
                seen.append(ctl.safety.mode)
                self.log(ctl.safety.mode, self._why(ctl.safety.history[-1]))

        return self.runtime.run(self.cfg.policy_s, lambda _t: self.sticks.command(robot.remote), on_tick=on_tick)

    def end(self) -> None:
        self.log("end", f"damping for {self.cfg.end_damping_s:g} s, then exit")
        self._hold(lambda s, _t: self.damping_command(s), lambda _s, _t: False, self.cfg.end_damping_s, checks=False)

    def faults(self) -> dict[str, Any]:
        """What the low states' gate dropped and the largest target steps (for the summary)."""
        gate = getattr(self.robot, "gate", None)
        out: dict[str, Any] = {"largest_target_step": dict(self.guard.largest), "guard_clipped": self.guard.clipped}
        if gate is not None:
            out.update(bad_crc=gate.bad_crc, frozen=gate.frozen, wrong_mode_machine=gate.wrong_machine)
        return out

    def run(self) -> dict[str, Any]:
        """The whole sequence; Ctrl-C at any point ends it with damping."""
        summary: dict[str, Any] = {}
        try:
            self.connect()
            step = self.damping()
            if step == "done":
                step = self.default_pose()
            if step == "done":
                summary = self.policy()
            elif step == "estop":  # latched until the time is up or Ctrl-C
                self._hold(lambda s, _t: self.damping_command(s), lambda _s, _t: False, self.cfg.policy_s,
                           checks=False)
        except KeyboardInterrupt:
            self.log("stop", "Ctrl-C")
        if self.states and self.states[0]["state"] == "connected":
            self.end()
        return {**summary, **self.faults(), "states": self.states, "pid": os.getpid()}
