"""Messages kept as their bytes, for a sender that fills the same few fields hundreds of times a second (the
simulated robot's 500 Hz low state): a template of the message in both layouts, the fields written in place with
numpy, the checksum over the C layout (``crc.FastCrc``) and the DDS sample's CDR bytes handed to the writer as they
are. ``tests/deploy/test_unitree_messages.py`` checks the bytes against CycloneDDS's own serializer.

Layouts (``messages.py`` field tables): the C struct Unitree's checksum runs over (each primitive aligned to its
size, a struct to its largest member and padded to it), and CDR, DDS's encoding of the same sample (each
primitive aligned to its size from the start of the data, no padding of its own for a struct).
"""

from __future__ import annotations

import struct
from typing import Any, Union

import numpy as np

from deploy.unitree.crc import FastCrc
from deploy.unitree.messages import PRIMITIVES, Message, alignment

_VIEWS = {"u8": "<u1", "i8": "<i1", "u16": "<u2", "i16": "<i2", "u32": "<u4", "i32": "<i4", "f32": "<f4"}


def offsets(msg: Message, cdr: bool, start: int = 0) -> tuple[dict[str, tuple[str, int, int]], int]:
    """``name -> (kind, offset, count)`` of every primitive field of ``msg`` laid out from ``start`` (names like
    ``motor_state.3.q``; an array of primitives is one entry at its first element), and the end offset."""
    out: dict[str, tuple[str, int, int]] = {}
    off = start if cdr else start + (-start % alignment(msg))
    for f in msg.fields:
        if isinstance(f.kind, str):
            size = struct.calcsize(PRIMITIVES[f.kind])
            off += -off % size
            out[f.name] = (f.kind, off, max(f.count, 1))
            off += size * max(f.count, 1)
            continue
        for k in range(max(f.count, 1)):
            inner, off = offsets(f.kind, cdr, off)
            prefix = f"{f.name}.{k}." if f.count else f"{f.name}."
            out.update({prefix + name: v for name, v in inner.items()})
    if not cdr:
        off += -off % alignment(msg)
    return out, off


class Template:
    """One message as bytes in one layout; ``set(name, values)`` writes a field (an array: from its start)."""

    def __init__(self, msg: Message, cdr: bool):
        self.msg = msg
        self.fields, size = offsets(msg, cdr)
        self.buf = bytearray(size + (-size % 4))
        self._views = {kind: np.frombuffer(self.buf, dtype=dt, count=len(self.buf) // np.dtype(dt).itemsize)
                       for kind, dt in _VIEWS.items()}

    def index(self, names: list[str]) -> tuple[np.ndarray, str]:
        """Element indices of the fields ``names`` (one kind) in their view: for ``set_many``."""
        kinds = {self.fields[n][0] for n in names}
        assert len(kinds) == 1, kinds
        kind = kinds.pop()
        size = np.dtype(_VIEWS[kind]).itemsize
        return np.array([self.fields[n][1] // size for n in names], dtype=np.int64), kind

    def set(self, name: str, values: Union[float, int, Any]) -> None:
        kind, off, count = self.fields[name]
        size = np.dtype(_VIEWS[kind]).itemsize
        self._views[kind][off // size:off // size + count] = values

    def set_many(self, index: tuple[np.ndarray, str], values: Any) -> None:
        self._views[index[1]][index[0]] = values

    def get(self, name: str) -> Any:
        kind, off, count = self.fields[name]
        size = np.dtype(_VIEWS[kind]).itemsize
        v = self._views[kind][off // size:off // size + count]
        return v.copy() if count > 1 else v[0].item()


class Packed:
    """A message in both layouts, kept equal field by field: ``set`` / ``set_many`` on both, ``seal()`` computes
    the checksum (C layout) into both and returns the CDR data."""

    def __init__(self, msg: Message):
        self.c, self.cdr = Template(msg, cdr=False), Template(msg, cdr=True)
        self.crc = FastCrc(len(self.c.buf) - 4)
        """The checksum over every C word but the last (the ``crc`` field)."""

    def index(self, names: list[str]) -> tuple[tuple[np.ndarray, str], tuple[np.ndarray, str]]:
        return self.c.index(names), self.cdr.index(names)

    def set(self, name: str, values: Any) -> None:
        self.c.set(name, values)
        self.cdr.set(name, values)

    def set_many(self, index: tuple[tuple[np.ndarray, str], tuple[np.ndarray, str]], values: Any) -> None:
        self.c.set_many(index[0], values)
        self.cdr.set_many(index[1], values)

    def seal(self) -> bytes:
        self.set("crc", self.crc(bytes(self.c.buf[:-4])))
        return bytes(self.cdr.buf)


class RawWriter:
    """A DataWriter fed CDR data made elsewhere (``Packed.seal``): the writer asks the sample to serialize
    itself, and this sample answers with the data (and the encoding header the writer's type would write)."""

    def __init__(self, writer: Any, data_type: Any, blank: Any):
        self.writer, self.data_type = writer, data_type
        self.header = blank.serialize(use_version_2=getattr(writer, "_use_version_2", None))[:4]
        self.size = len(blank.serialize()) - 4
        """Bytes of the data after the header."""

    def write(self, data: bytes) -> None:
        sample = object.__new__(self.data_type)
        payload = self.header + data[:self.size]
        sample.serialize = lambda use_version_2=None, **_: payload
        self.writer.write(sample)
