"""The checksum of Unitree's low-level messages, in plain Python (no vendor library).

The message is packed as its C struct (``messages.pack``: little-endian, natural alignment; LowCmd_ 812 bytes
for ``unitree_go``, 1004 for ``unitree_hg``), read as 32-bit little-endian words, and every word but the last
(the ``crc`` field itself) is fed most significant bit first into a CRC-32 with polynomial 0x04C11DB7, initial
value 0xFFFFFFFF, no reflection and no final XOR (the CRC unit of STM32 microcontrollers; over a byte string whose
words are already big-endian it is the catalogued CRC-32/MPEG-2). A robot drops a command whose ``crc`` is wrong.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from deploy.unitree.messages import Message, pack

POLY = 0x04C11DB7


def _table() -> tuple[int, ...]:
    out = []
    for byte in range(256):
        c = byte << 24
        for _ in range(8):
            c = ((c << 1) ^ POLY if c & 0x80000000 else c << 1) & 0xFFFFFFFF
        out.append(c)
    return tuple(out)


TABLE = _table()
"""One entry per leading byte: the register after shifting that byte through (8 zero bits)."""


def _shifted(table: tuple[int, ...]) -> tuple[int, ...]:
    """The table of one more zero byte after the entry's."""
    return tuple(((c << 8) & 0xFFFFFFFF) ^ TABLE[c >> 24] for c in table)


T8 = TABLE
T16 = _shifted(T8)
T24 = _shifted(T16)
T32 = _shifted(T24)
"""A byte followed by 0, 1, 2 or 3 zero bytes: a whole word in four look-ups (the CRC is linear)."""


def crc32_words(words: Any, crc: int = 0xFFFFFFFF) -> int:
    """The CRC over 32-bit words, each most significant bit first."""
    for w in words:
        crc ^= w
        crc = T32[crc >> 24] ^ T24[(crc >> 16) & 0xFF] ^ T16[(crc >> 8) & 0xFF] ^ T8[crc & 0xFF]
    return crc


def crc32_mpeg2(data: bytes, crc: int = 0xFFFFFFFF) -> int:
    """The same register fed byte by byte (any length): the catalogued CRC-32/MPEG-2 (check value of
    ``b"123456789"``: 0x0376E6E7). Over big-endian words it equals ``crc32_words``."""
    t = TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ t[(crc >> 24) ^ b]
    return crc


def checksum(msg: Message, obj: Any) -> int:
    """What the ``crc`` field of ``obj`` (a ``msg`` sample) must hold: the CRC of its packed words but the last."""
    data = pack(msg, obj)
    return crc32_words(struct.unpack(f"<{len(data) // 4 - 1}I", data[:-4]))


class FastCrc:
    """The same CRC over data of one fixed length (a multiple of 4), in numpy: the register is linear in the
    data, so the CRC is a constant XOR one table entry per byte position (``length`` x 256 entries, built once)."""

    def __init__(self, length: int, init: int = 0xFFFFFFFF):
        table = np.array(TABLE, dtype=np.uint32)

        def zero_byte(v: np.ndarray) -> np.ndarray:  # the register after one more zero byte
            return (v << np.uint32(8)) ^ table[v >> np.uint32(24)]

        self.length = length
        pos = np.empty((length, 256), dtype=np.uint32)
        row = table.copy()  # a byte with k zero bytes after it
        for k in range(length):
            pos[length - 1 - k] = row
            row = zero_byte(row)
        self.table = pos
        reg = np.array([init], dtype=np.uint32)
        for _ in range(length):
            reg = zero_byte(reg)
        self.const = int(reg[0])
        """The register after ``length`` zero bytes from ``init``."""
        self._rows = np.arange(length)
        self._order = (np.arange(length).reshape(-1, 4)[:, ::-1]).ravel()  # each little-endian word MSB first

    def __call__(self, data: bytes) -> int:
        b = np.frombuffer(data, dtype=np.uint8, count=self.length)[self._order]
        return self.const ^ int(np.bitwise_xor.reduce(self.table[self._rows, b]))
