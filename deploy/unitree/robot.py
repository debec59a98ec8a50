"""``UnitreeRobot``: the runtime's ``Robot`` (``deploy/runtime/robot.py``) over Unitree's low-level DDS topics.

It reads ``rt/lowstate`` (the newest sample only, taken when the runtime reads; it is stamped with the time
of the first read that sees it, which is at most one publishing period, 2 ms, after it arrived) and writes
``rt/lowcmd``, with the message family and the slot <-> joint names of a robot profile
(``profiles.py``): joint arrays cross in slot order under the Menagerie joint names, and the runtime matches them
to the policy's by name. A command fills every slot: the profile's joints in servo mode with the runtime's target,
gains and feed-forward torque (velocity target 0); slots without a motor idle (mode 0, zero gains). Each command
carries Unitree's checksum (``crc.py``) and, on ``unitree_hg``, the ``mode_machine`` the robot reports.

Each low state passes ``freshness.LowStateGate`` (checksum, a tick that advances, the G1's ``mode_machine``); a
dropped one is never stamped, so the runtime's watchdog sees the robot as silent. Before its first command the
sequence asks ``other_senders``: whether another process writes ``rt/lowcmd`` (the robot's sport mode, another
program), heard by a reader on that topic while this process has written nothing.

The low state has no base velocity. A policy that observes ``base_lin_vel`` reads it from
``TOPIC_BASE_VELOCITY`` (an estimator's output on a robot; the simulated robot's truth plus noise in a rehearsal)
when ``base_velocity`` is set.

``fill_command`` and ``state_of`` (the slot mapping) work on any object shaped like the messages
(``messages.blank``); only ``UnitreeRobot`` needs cyclonedds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Optional

import numpy as np

from deploy.runtime.robot import JointCommand, RobotState
from deploy.unitree.crc import checksum
from deploy.unitree.dds import Participant
from deploy.unitree.freshness import LowStateGate
from deploy.unitree.messages import BASE_VELOCITY, FAMILIES, TOPIC_BASE_VELOCITY, TOPIC_LOWCMD, TOPIC_LOWSTATE
from deploy.unitree.profiles import Profile
from deploy.unitree.remote import Remote, decode

GO_HEAD = (0xFE, 0xEF)
"""``head`` of a ``unitree_go`` command."""
GO_LOW_LEVEL = 0xFF
"""``level_flag`` of a low-level ``unitree_go`` command."""
GO_POS_STOP, GO_VEL_STOP = 2.146e9, 16000.0
"""``q`` / ``dq`` values that switch a ``unitree_go`` motor's position / velocity loop off (an idle slot)."""
MODE_PR = 0
"""``mode_pr`` of a ``unitree_hg`` command: ankles (and waist) as pitch and roll joints, as the model has them."""


def idle_command(profile: Profile, cmd: Any) -> Any:
    """``cmd`` (a blank ``LowCmd_``) with every slot idle and its header set for low-level control."""
    if profile.family == "unitree_go":
        cmd.head = list(GO_HEAD)
        cmd.level_flag = GO_LOW_LEVEL
        for m in cmd.motor_cmd:
            m.q, m.dq = GO_POS_STOP, GO_VEL_STOP
    else:
        cmd.mode_pr = MODE_PR
    return cmd


def fill_command(profile: Profile, cmd: Any, command: JointCommand, mode_machine: int = 0) -> Any:
    """``cmd`` with ``command`` (the profile's joint order) in its slots and its checksum; idle slots untouched."""
    mode = profile.servo_mode
    for k, i in enumerate(profile.slot_of[n] for n in profile.joints):
        m = cmd.motor_cmd[i]
        m.mode, m.q, m.dq, m.tau = mode, float(command.target[k]), 0.0, float(command.tau_ff[k])
        m.kp, m.kd = float(command.kp[k]), float(command.kd[k])
    if profile.family == "unitree_hg":
        cmd.mode_machine = mode_machine
    cmd.crc = checksum(FAMILIES[profile.family]["LowCmd_"], cmd)
    return cmd


def state_of(profile: Profile, sample: Any, stamp: float, base_lin_vel: Optional[np.ndarray] = None) -> RobotState:
    """The runtime's sensor sample (the profile's joint order) from a ``LowState_``."""
    motors = [sample.motor_state[profile.slot_of[n]] for n in profile.joints]
    imu = sample.imu_state
    return RobotState(stamp, np.array([m.q for m in motors], dtype=np.float64),
                      np.array([m.dq for m in motors], dtype=np.float64),
                      np.asarray(imu.quaternion, dtype=np.float64), np.asarray(imu.gyroscope, dtype=np.float64),
                      base_lin_vel)


class UnitreeRobot:
    """``Robot`` of one Unitree robot on a DDS participant (``dds.Participant``)."""

    def __init__(self, profile: Profile, participant: Participant, base_velocity: bool = False,
                 out: Callable[[str], None] = print):
        from deploy.unitree import idl  # cyclonedds: only the DDS side needs it

        self.profile = profile
        self.gate = LowStateGate(profile.family, out)
        """Which low states are fresh (``freshness.py``); its counts and the cause of a silence."""
        self.where = f"interface {participant.interface}, domain {participant.domain}"
        """Where it listens (for messages)."""
        family = FAMILIES[profile.family]
        self._cmd = idle_command(profile, idl.new(family["LowCmd_"]))
        self._cmd_type = idl.low_cmd(profile.family)
        self._others = participant.reader(TOPIC_LOWCMD, self._cmd_type)
        self._written = 0
        self._writer = participant.writer(TOPIC_LOWCMD, idl.low_cmd(profile.family))
        self.received = 0
        """Low states read."""
        self._state_type = idl.low_state(profile.family)
        self._reader = participant.reader(TOPIC_LOWSTATE, self._state_type)
        self._velocity = (participant.reader(TOPIC_BASE_VELOCITY, idl.idl_class(BASE_VELOCITY))
                          if base_velocity else None)
        self._lin_vel: Optional[np.ndarray] = None
        self._newest: Optional[RobotState] = None
        self.remote = Remote()
        """The wireless remote in the newest low state."""
        self.mode_machine = 0
        """``unitree_hg``: the robot variant it reports (echoed in every command)."""
        self.tick = 0
        """The newest low state's ``tick`` (ms, the robot's clock)."""

    @property
    def joint_names(self) -> Sequence[str]:
        return self.profile.joints

    def clock(self) -> float:
        return time.monotonic()

    def read(self) -> Optional[RobotState]:
        samples = [s for s in self._reader.take(N=1) if isinstance(s, self._state_type)]  # not a writer's goodbye
        if self._velocity is not None:
            vel = [v for v in self._velocity.take(N=1) if hasattr(v, "velocity")]
            if vel:
                self._lin_vel = np.asarray(vel[-1].velocity, dtype=np.float64)
        if samples:
            self.received += 1
            if self.gate.accept(samples[-1]):
                self._newest = self._state(samples[-1], self.clock())
        return self._newest

    def other_senders(self, listen_s: float) -> int:
        """Commands another process wrote on ``rt/lowcmd`` within ``listen_s`` (s); only before this process's first
        write (after it, its own commands would be heard)."""
        assert self._written == 0, "other_senders listens before the first command only"
        heard, end = 0, time.monotonic() + listen_s
        while True:
            heard += sum(isinstance(s, self._cmd_type) for s in self._others.take(N=64))
            if time.monotonic() >= end:
                return heard
            time.sleep(0.005)

    def _state(self, s: Any, stamp: float) -> RobotState:
        self.remote = decode(s.wireless_remote)
        self.tick = int(s.tick)
        if self.profile.family == "unitree_hg":
            self.mode_machine = int(s.mode_machine)  # the gate passes the first fresh sample's only
        return state_of(self.profile, s, stamp, None if self._lin_vel is None else self._lin_vel.copy())

    def write(self, command: JointCommand) -> None:
        self._written += 1
        self._writer.write(fill_command(self.profile, self._cmd, command, self.mode_machine))
