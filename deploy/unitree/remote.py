"""Unitree's wireless remote as the low state carries it (``wireless_remote``, 40 bytes), and its sticks as the
policy's velocity command.

Layout (little-endian): bytes 2-3 a 16-bit button mask (``BUTTONS``, bit 0 first), then float32 stick values in
[-1, 1]: ``lx`` at byte 4, ``rx`` at 8, ``ry`` at 12, ``ly`` at 20 (byte 16: the L2 trigger's travel). Sticks:
``ly`` forward, ``lx`` right, ``rx`` turns right; the command is ``vx = ly``, ``vy = -lx``, ``yaw rate = -rx``,
each scaled to the policy's training range on its side (``command_ranges``), zero inside ``DEADZONE``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BUTTONS = ("R1", "L1", "start", "select", "R2", "L2", "F1", "F2", "A", "B", "X", "Y", "up", "right", "down", "left")
"""Button per bit of the mask, bit 0 first."""
STICKS = {"lx": 4, "rx": 8, "ry": 12, "ly": 20}
"""Byte offset of each stick's float32."""
DEADZONE = 0.05
"""Stick values smaller than this read as zero (a released stick is not exactly centred)."""
SIZE = 40


@dataclass(frozen=True)
class Remote:
    """One reading of the remote."""

    buttons: frozenset[str] = field(default_factory=frozenset)
    """The buttons held down."""
    lx: float = 0.0
    ly: float = 0.0
    rx: float = 0.0
    ry: float = 0.0


def decode(data: Iterable[int]) -> Remote:
    raw = bytes(bytearray(data))
    if len(raw) < SIZE:
        return Remote()
    mask = struct.unpack_from("<H", raw, 2)[0]
    sticks = {k: struct.unpack_from("<f", raw, off)[0] for k, off in STICKS.items()}
    return Remote(frozenset(b for i, b in enumerate(BUTTONS) if mask >> i & 1), **sticks)


def encode(remote: Remote) -> list[int]:
    """The 40 bytes of ``remote`` (what the simulated robot puts in its low state)."""
    raw = bytearray(SIZE)
    struct.pack_into("<H", raw, 2, sum(1 << BUTTONS.index(b) for b in remote.buttons))
    for k, off in STICKS.items():
        struct.pack_into("<f", raw, off, getattr(remote, k))
    return list(raw)


class StickMap:
    """Sticks -> velocity command (vx, vy, yaw rate) within the policy's training ranges, and back."""

    def __init__(self, meta: dict[str, Any]):
        r = meta["command_ranges"]
        self.ranges = np.array([r["lin_vel_x"], r["lin_vel_y"], r["yaw_rate"]], dtype=np.float64)  # [3, (lo, hi)]

    def _scale(self, axis: np.ndarray) -> np.ndarray:
        """Per axis value in [-1, 1]: the range's high end for positive values, minus its low end for negative."""
        side = np.where(axis >= 0, self.ranges[:, 1], -self.ranges[:, 0])
        return axis * side

    def command(self, remote: Remote) -> np.ndarray:
        axis = np.array([remote.ly, -remote.lx, -remote.rx], dtype=np.float64)
        axis = np.where(np.abs(axis) < DEADZONE, 0.0, np.clip(axis, -1.0, 1.0))
        return self._scale(axis)

    def sticks(self, command: Iterable[float]) -> Remote:
        """The stick reading that commands ``command`` (clipped to the ranges)."""
        c = np.asarray(list(command), dtype=np.float64)
        side = np.where(c >= 0, self.ranges[:, 1], -self.ranges[:, 0])
        with np.errstate(divide="ignore", invalid="ignore"):
            axis = np.clip(np.where(side > 0, c / side, 0.0), -1.0, 1.0)
        return Remote(ly=float(axis[0]), lx=float(-axis[1]), rx=float(-axis[2]))
