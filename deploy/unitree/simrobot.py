"""The simulated robot of ``deploy/simrobot.py`` speaking Unitree's DDS: its own process, MuJoCo in real time.

    python -m deploy.unitree.simrobot CONFIG_JSON      (a ``DdsSimConfig`` as JSON; started by the rehearsal)

The physics, motor model, noise and latency are ``deploy/simrobot.py``'s (the policy file's scene at 1 kHz, a
torque PD ``tau = tau_ff + kp (q_des - q) + kd (dq_des - dq)`` clipped to the torque limits). It publishes
``rt/lowstate`` (the profile's message family, every 2 ms, the joints in their slots, the IMU, a ``tick`` in ms
and the wireless remote it plays from ``remote``) and, for policies that observe it, the base velocity; it applies
each ``rt/lowcmd`` whose checksum is right (a wrong one is counted and dropped, as the robot drops it) after the
command latency; a slot in mode 0 gets no torque. DDS runs on loopback only (``dds.loopback_config``), in
``domain``. It prints ``READY <domain>`` once its topics exist, and one JSON line (``deploy/simrobot.py``'s report
plus the checksum count) when the time is up or it gets SIGTERM.

Faults a test injects (``DdsSimConfig.fault``, from ``fault_at_s`` after the first command on, to the end):
``frozen`` (the last low state republished as it was, same tick), ``bad_crc`` (low states with a wrong checksum),
``lost`` (no more low states), ``nan`` (a NaN joint position); ``gantry_s`` holds the base up at first, as a
humanoid hangs from its gantry while the sequence damps and poses it; ``second_sender`` publishes idle commands on
``rt/lowcmd`` from the start, as a robot whose sport mode still holds the low-level channel. The report says when
the fault began and how long until the first damping command (every joint at zero stiffness) arrived; ``trace``
writes every applied command (time, stiffness, target, the joints' positions then, the writer's timestamp in ns)
for continuity checks.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Optional

import numpy as np

from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.loop import realtime
from deploy.runtime.robot import JointCommand, RobotState
from deploy.simrobot import SimRobotConfig, SimulatedRobot, robot_joints, serve
from deploy.unitree import idl
from deploy.unitree.crc import checksum
from deploy.unitree.dds import LOOPBACK, Participant
from deploy.unitree.messages import BASE_VELOCITY, FAMILIES, TOPIC_BASE_VELOCITY, TOPIC_LOWCMD, TOPIC_LOWSTATE
from deploy.unitree.packed import Packed, RawWriter
from deploy.unitree.profiles import Profile, get
from deploy.unitree.remote import Remote, StickMap, encode

MODE_MACHINE = 5
FAULTS = ("", "frozen", "bad_crc", "lost", "nan")
"""What ``DdsSimConfig.fault`` may inject ('': none)."""
"""``mode_machine`` the simulated ``unitree_hg`` robot reports (any fixed value: the runtime must echo it)."""


@dataclass(frozen=True)
class RemoteStep:
    """From ``at_s`` after the first command on (until the next step), the remote reads so."""

    at_s: float
    """Seconds after the first command arrived."""
    buttons: tuple[str, ...] = ()
    """Buttons held (``remote.BUTTONS``)."""
    command: Optional[tuple[float, float, float]] = None
    """Sticks set to command this (vx, vy, yaw rate; ``StickMap.sticks``); None: released."""


@dataclass(frozen=True)
class DdsSimConfig:
    """One run of the simulated robot over DDS."""

    sim: SimRobotConfig
    """The robot (``deploy/simrobot.py``); its ``sdk_order`` is ignored (the profile's slots decide)."""
    profile: str = "unitree_go2"
    """Robot profile (``profiles.py``): message family and slots."""
    domain: int = 1
    """DDS domain on loopback."""
    remote: tuple[RemoteStep, ...] = ()
    """What the wireless remote does (released throughout when empty)."""
    mode_machine: int = MODE_MACHINE
    """``unitree_hg``: the robot variant reported and expected back."""
    fault: str = ""
    """A fault of the low state (``FAULTS``) injected from ``fault_at_s`` on."""
    fault_at_s: float = 0.0
    """Seconds after the first command when ``fault`` begins."""
    second_sender: bool = False
    """Another process's idle commands on rt/lowcmd at the state's rate, from the start."""
    trace: str = ""
    """A JSON file for every applied command ('': none)."""
    gantry_s: float = 0.0
    """The base is held where it started (a gantry, as a humanoid is started) until this long after the first
    command (s; 0: free from the start)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> DdsSimConfig:
        d = json.loads(text)
        d["sim"] = SimRobotConfig.from_json(json.dumps(d["sim"]))
        d["remote"] = tuple(RemoteStep(s["at_s"], tuple(s["buttons"]), None if s["command"] is None else
                                       tuple(s["command"])) for s in d.get("remote", ()))
        return DdsSimConfig(**d)


class DdsLink:
    """The simulated robot's side of Unitree's topics (``serve``'s link): lowcmd in, lowstate out."""

    def __init__(self, cfg: DdsSimConfig, robot: SimulatedRobot, participant: Participant):
        self.cfg, self.profile = cfg, get(cfg.profile)
        profile: Profile = self.profile
        family = FAMILIES[profile.family]
        self.cmd_msg, self.state_msg = family["LowCmd_"], family["LowState_"]
        self.slots = np.array([profile.slot_of[n] for n in robot.joint_names])
        """Message slot of each simulated joint (``robot.joint_names`` order)."""
        self.robot = robot
        self.sticks = StickMap(robot.meta)
        self._cmd_type = idl.low_cmd(profile.family)
        self._reader = participant.reader(TOPIC_LOWCMD, self._cmd_type)
        state_type = idl.low_state(profile.family)
        self._writer = RawWriter(participant.writer(TOPIC_LOWSTATE, state_type), state_type, idl.new(self.state_msg))
        self._velocity = (participant.writer(TOPIC_BASE_VELOCITY, idl.idl_class(BASE_VELOCITY))
                          if cfg.sim.base_velocity else None)
        self._vel = idl.new(BASE_VELOCITY)
        self._state = Packed(self.state_msg)  # the 500 Hz low state, written in place (deploy/unitree/packed.py)
        self._q = self._state.index([f"motor_state.{i}.q" for i in self.slots])
        self._dq = self._state.index([f"motor_state.{i}.dq" for i in self.slots])
        self._state.set_many(self._state.index([f"motor_state.{i}.mode" for i in self.slots]), 1)
        if profile.family == "unitree_hg":
            self._state.set("mode_machine", cfg.mode_machine)
        self.t0 = time.monotonic()
        self.first: Optional[float] = None
        """When the first command arrived (monotonic s)."""
        self.quit = False
        self.bad_crc = 0
        self.wrong_machine = 0
        self.fault_start: Optional[float] = None
        """When the fault began (monotonic s)."""
        self.damped: Optional[float] = None
        """When the first damping command after the fault arrived (monotonic s)."""
        self.trace: list[list[Any]] = []
        self.servo_commands = 0
        """Commands that put a motor in servo mode (not another sender's idle ones)."""
        self.stiff_after_damping = 0
        """Commands with stiffness after the first damping one that followed the fault (latched damping: 0)."""
        self._sealed: Optional[bytes] = None
        self._base = robot.data.qpos[robot.bq:robot.bq + 7].copy()
        self._other = None
        if cfg.second_sender:
            from deploy.unitree.robot import idle_command

            self._other = (participant.writer(TOPIC_LOWCMD, self._cmd_type),
                           idle_command(profile, idl.new(self.cmd_msg)))
            self._other[1].crc = checksum(self.cmd_msg, self._other[1])

    def faulty(self, now: float) -> bool:
        """Whether the fault is on at ``now`` (noting when it began)."""
        if not self.cfg.fault or self.first is None or now < self.first + self.cfg.fault_at_s:
            return False
        if self.fault_start is None:
            self.fault_start = now
        return True

    def _note(self, now: float, cmd: JointCommand, sent_ns: int) -> None:
        if self.fault_start is not None and self.damped is None and not np.any(cmd.kp > 0):
            self.damped = now
        if self.damped is not None and np.any(cmd.kp > 0):
            self.stiff_after_damping += 1
        if self.cfg.trace:
            q = self.robot.data.qpos[self.robot.qadr]
            self.trace.append([round(now - self.t0, 4), cmd.kp.tolist(), cmd.target.tolist(), q.tolist(), sent_ns])

    def remote_at(self, t: float) -> Remote:
        """The remote at monotonic time ``t`` (released before the first command)."""
        step = None
        for s in self.cfg.remote:
            if self.first is not None and t >= self.first + s.at_s:
                step = s
        if step is None:
            return Remote()
        sticks = self.sticks.sticks(step.command) if step.command is not None else Remote()
        return Remote(frozenset(step.buttons), sticks.lx, sticks.ly, sticks.rx, sticks.ry)

    def _gantry(self, now: float) -> None:
        if self.cfg.gantry_s > 0 and (self.first is None or now < self.first + self.cfg.gantry_s):
            r = self.robot
            r.data.qpos[r.bq:r.bq + 7] = self._base
            r.data.qvel[r.bv:r.bv + 6] = 0.0

    def receive(self) -> list[tuple[JointCommand, np.ndarray]]:
        self._gantry(time.monotonic())
        out = []
        for s in self._reader.take(N=8):
            if not isinstance(s, self._cmd_type):  # a writer that went away (no data)
                continue
            if s.crc != checksum(self.cmd_msg, s):
                self.bad_crc += 1
                continue
            if self.profile.family == "unitree_hg" and s.mode_machine != self.cfg.mode_machine:
                self.wrong_machine += 1
                continue
            now = time.monotonic()
            if self.first is None:
                self.first = now
            motors = [s.motor_cmd[i] for i in self.slots]
            on = np.array([m.mode != 0 for m in motors], dtype=np.float64)
            kd = on * np.array([m.kd for m in motors])
            tau = on * np.array([m.tau for m in motors]) + kd * self.cfg.sim.kd_scale * np.array([m.dq for m in motors])
            # kd (dq_des - dq) = kd dq_des - kd dq: the velocity target enters as a feed-forward torque
            cmd = JointCommand(np.array([m.q for m in motors]), on * np.array([m.kp for m in motors]), kd, tau)
            self.servo_commands += int(on.any())
            info = getattr(s, "sample_info", None)
            self._note(now, cmd, int(info.source_timestamp) if info is not None else 0)
            out.append((cmd, self.sticks.command(self.remote_at(now))))
        return out

    def encode(self, seq: int, state: RobotState) -> Any:
        return seq, state, self.remote_at(state.stamp)

    def send(self, packet: Any) -> bool:
        _seq, state, remote = packet
        if self._other is not None:
            self._other[0].write(self._other[1])
        fault = self.cfg.fault if self.faulty(time.monotonic()) else ""
        if fault == "lost":
            return False
        if fault == "frozen" and self._sealed is not None:
            self._writer.write(self._sealed)
            return True
        s = self._state
        q = np.array(state.joint_pos, dtype=np.float64)
        if fault == "nan":
            q[0] = np.nan
        s.set_many(self._q, q)
        s.set_many(self._dq, state.joint_vel)
        s.set("imu_state.quaternion", state.imu_quat)
        s.set("imu_state.gyroscope", state.gyro)
        tick = int(round(1e3 * (state.stamp - self.t0))) & 0xFFFFFFFF
        s.set("tick", tick)
        s.set("wireless_remote", encode(remote))
        self._sealed = s.seal()
        if fault == "bad_crc":
            s.cdr.set("crc", s.c.get("crc") ^ 0x1)
            self._sealed = bytes(s.cdr.buf)
        self._writer.write(self._sealed)
        if self._velocity is not None and state.base_lin_vel is not None:
            self._vel.tick, self._vel.velocity = tick, [float(x) for x in state.base_lin_vel]
            self._velocity.write(self._vel)
        return True


def run(cfg: DdsSimConfig) -> dict[str, Any]:
    profile = get(cfg.profile)
    if cfg.fault not in FAULTS:
        raise UserError(f"simrobot: fault={cfg.fault!r} is not allowed; expected one of {', '.join(map(repr, FAULTS))}")
    joints = robot_joints(OnnxPolicy(cfg.sim.policy).metadata)
    missing = [n for n in joints if n not in profile.slot_of]
    if missing:
        raise UserError(f"simrobot: the {profile.name} profile has no slot for joint(s) {', '.join(missing)}")
    order = tuple(n for n in profile.joints if n in joints)  # the simulated joints in slot order
    sim = SimulatedRobot(dataclasses.replace(cfg.sim, sdk_order=order))  # a bad config fails before READY
    participant = Participant(LOOPBACK, cfg.domain)
    link = DdsLink(cfg, sim, participant)
    signal.signal(signal.SIGTERM, lambda *_: setattr(link, "quit", True))
    if cfg.sim.rt_priority:
        realtime(cfg.sim.rt_priority)
    print(f"READY {cfg.domain}", flush=True)
    report = serve(sim, link)
    if cfg.trace:
        with open(cfg.trace, "w") as f:
            json.dump({"joints": list(sim.joint_names), "commands": link.trace}, f)
    ms = (None if link.damped is None or link.fault_start is None else 1e3 * (link.damped - link.fault_start))
    fault_s = None if link.fault_start is None or link.first is None else link.fault_start - link.first
    return {**report, "bad_crc": link.bad_crc, "wrong_mode_machine": link.wrong_machine, "profile": profile.name,
            "servo_commands": link.servo_commands, "stiff_after_damping": link.stiff_after_damping, "fault": cfg.fault,
            "fault_after_first_s": fault_s, "damping_after_ms": ms}


def main() -> None:
    try:
        report = run(DdsSimConfig.from_json(sys.argv[1]))
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
