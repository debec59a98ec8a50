"""The runtime <-> robot transport of the rehearsal: UDP datagrams on loopback, one packet per message.

Why UDP: it is what robot SDKs use on their Ethernet link (Unitree's low-level SDK sends fixed-layout UDP
datagrams; DDS runs on UDP too), a lost or late packet is dropped instead of queued (the newest sample wins, as
on hardware), each side stays in its own process with no shared state, and it needs nothing beyond the standard
library. Shared memory would need its own locking and a shared clock anyway; DDS would add a dependency.

Packets (little-endian; arrays float64, robot joint order):
    state    b"LMS2", seq u32, stamp f64, J u32, P u32 | joint_pos[J] joint_vel[J] quat[4] gyro[3] lin_vel[3] scan[P]
             (lin_vel NaN when the robot has no estimate)
    command  b"LMC2", seq u32, stamp f64, J u32 | target[J] kp[J] kd[J] tau_ff[J] reference[3]
             (reference: the velocity command the runtime is tracking, read only by the simulated robot's scoring)
    hello    b"LMH2": the runtime's address (the robot streams states to the last hello's sender)
    quit     b"LMQ2": the simulated robot ends its run and reports
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Sequence
from typing import Optional

import numpy as np

from deploy.runtime.robot import JointCommand, RobotState

STATE, COMMAND, HELLO, QUIT = b"LMS2", b"LMC2", b"LMH2", b"LMQ2"
_STATE_HEAD = struct.Struct("<4sIdII")
_COMMAND_HEAD = struct.Struct("<4sIdI")
MAX_PACKET = 65507
"""Largest UDP payload."""


def pack_state(seq: int, s: RobotState) -> bytes:
    scan = np.zeros(0) if s.height_scan is None else np.asarray(s.height_scan, dtype=np.float64)
    lin = np.full(3, np.nan) if s.base_lin_vel is None else s.base_lin_vel
    body = np.concatenate([s.joint_pos, s.joint_vel, s.imu_quat, s.gyro, lin, scan]).astype("<f8")
    return _STATE_HEAD.pack(STATE, seq & 0xFFFFFFFF, s.stamp, len(s.joint_pos), len(scan)) + body.tobytes()


def unpack_state(data: bytes) -> tuple[int, RobotState]:
    _, seq, stamp, nj, npts = _STATE_HEAD.unpack_from(data)
    x = np.frombuffer(data, dtype="<f8", offset=_STATE_HEAD.size).astype(np.float64)
    q, qd, quat = x[:nj], x[nj:2 * nj], x[2 * nj:2 * nj + 4]
    gyro, lin = x[2 * nj + 4:2 * nj + 7], x[2 * nj + 7:2 * nj + 10]
    scan = x[2 * nj + 10:2 * nj + 10 + npts] if npts else None
    return seq, RobotState(stamp, q, qd, quat, gyro, None if np.isnan(lin).all() else lin, scan)


def pack_command(seq: int, stamp: float, c: JointCommand, reference: np.ndarray) -> bytes:
    body = np.concatenate([c.target, c.kp, c.kd, c.tau_ff, reference]).astype("<f8")
    return _COMMAND_HEAD.pack(COMMAND, seq & 0xFFFFFFFF, stamp, len(c.target)) + body.tobytes()


def unpack_command(data: bytes) -> tuple[int, float, JointCommand, np.ndarray]:
    _, seq, stamp, nj = _COMMAND_HEAD.unpack_from(data)
    x = np.frombuffer(data, dtype="<f8", offset=_COMMAND_HEAD.size).astype(np.float64)
    return seq, stamp, JointCommand(x[:nj], x[nj:2 * nj], x[2 * nj:3 * nj], x[3 * nj:4 * nj]), x[4 * nj:4 * nj + 3]


class UdpRobot:
    """The runtime's side of the link: a ``Robot`` that talks to a robot (the simulated one) at ``address``."""

    def __init__(self, joint_names: Sequence[str], address: tuple[str, int]):
        self._names = tuple(joint_names)
        self.address = address
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.sock.sendto(HELLO, address)
        self._seq = 0
        self._newest: Optional[tuple[int, RobotState]] = None
        self.reference = np.full(3, np.nan)
        """The velocity command being tracked, sent along for the simulated robot's scoring."""
        self.received = 0

    @property
    def joint_names(self) -> Sequence[str]:
        return self._names

    def clock(self) -> float:
        return time.monotonic()  # CLOCK_MONOTONIC: one clock for every process of the machine

    def read(self) -> Optional[RobotState]:
        while True:  # drain: keep the newest sample
            try:
                data = self.sock.recv(MAX_PACKET)
            except BlockingIOError:
                break
            if data[:4] != STATE:
                continue
            seq, state = unpack_state(data)
            self.received += 1
            if self._newest is None or state.stamp >= self._newest[1].stamp:
                self._newest = (seq, state)
        return None if self._newest is None else self._newest[1]

    def write(self, command: JointCommand) -> None:
        self._seq += 1
        self.sock.sendto(pack_command(self._seq, self.clock(), command, self.reference), self.address)

    def quit(self) -> None:
        self.sock.sendto(QUIT, self.address)

    def close(self) -> None:
        self.sock.close()
