"""Unitree's low-level messages as data: every field of ``LowCmd_`` / ``LowState_`` and their parts, for the two
families, in declaration order. Pure Python (no DDS): the DDS types (``idl.py``) and the checksum's packing
(``crc.py``) are both built from these tables, so they cannot disagree.

    unitree_go   Go2, Go1, B2: 20 motor slots (a Go2 uses 12), a header, a battery block, LEDs, a fan
    unitree_hg   G1, H1-2: 35 motor slots, ``mode_pr`` (ankle / waist joints as pitch-roll or A-B motors) and
                 ``mode_machine`` (the robot variant, echoed back from the low state in every command)

Type names, field names, types, array lengths and order are those of Unitree's SDK (its IDL files
``unitree_go/msg/LowCmd_.idl`` ...), so a robot's DDS stack accepts our samples as its own; the topics are
``rt/lowcmd`` (commands, computer -> robot) and ``rt/lowstate`` (the robot's 500 Hz state).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Union

TOPIC_LOWCMD = "rt/lowcmd"
TOPIC_LOWSTATE = "rt/lowstate"

PRIMITIVES = {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i", "f32": "f"}
"""Field kinds -> ``struct`` codes (every one aligned to its own size in Unitree's C packing)."""


@dataclass(frozen=True)
class Field:
    """One member of a message."""

    name: str
    """The IDL member name."""
    kind: Union[str, Message]
    """A primitive (``PRIMITIVES``) or a nested message."""
    count: int = 0
    """Array length; 0 for a single value."""


@dataclass(frozen=True)
class Message:
    """One IDL struct: its fully qualified DDS type name and its members in order."""

    typename: str
    """``module.msg.dds_.Name_`` as Unitree's types declare it (the type name travels in DDS discovery)."""
    fields: tuple[Field, ...]
    """Members in declaration order."""

    @property
    def name(self) -> str:
        return self.typename.rsplit(".", 1)[1]


def _msg(typename: str, *fields: tuple[Any, ...]) -> Message:
    return Message(typename, tuple(Field(*f) for f in fields))


def _family(module: str) -> dict[str, Message]:
    """Name -> Message of one family (``unitree_go`` or ``unitree_hg``)."""
    t = f"{module}.msg.dds_."
    if module == "unitree_go":
        imu = _msg(t + "IMUState_", ("quaternion", "f32", 4), ("gyroscope", "f32", 3), ("accelerometer", "f32", 3),
                   ("rpy", "f32", 3), ("temperature", "u8"))
        motor_cmd = _msg(t + "MotorCmd_", ("mode", "u8"), ("q", "f32"), ("dq", "f32"), ("tau", "f32"), ("kp", "f32"),
                         ("kd", "f32"), ("reserve", "u32", 3))
        motor_state = _msg(t + "MotorState_", ("mode", "u8"), ("q", "f32"), ("dq", "f32"), ("ddq", "f32"),
                           ("tau_est", "f32"), ("q_raw", "f32"), ("dq_raw", "f32"), ("ddq_raw", "f32"),
                           ("temperature", "u8"), ("lost", "u32"), ("reserve", "u32", 2))
        bms_cmd = _msg(t + "BmsCmd_", ("off", "u8"), ("reserve", "u8", 3))
        bms_state = _msg(t + "BmsState_", ("version_high", "u8"), ("version_low", "u8"), ("status", "u8"),
                         ("soc", "u8"), ("current", "i32"), ("cycle", "u16"), ("bq_ntc", "u8", 2),
                         ("mcu_ntc", "u8", 2), ("cell_vol", "u16", 15))
        head = (("head", "u8", 2), ("level_flag", "u8"), ("frame_reserve", "u8"), ("sn", "u32", 2),
                ("version", "u32", 2), ("bandwidth", "u16"))
        low_cmd = _msg(t + "LowCmd_", *head, ("motor_cmd", motor_cmd, 20), ("bms_cmd", bms_cmd),
                       ("wireless_remote", "u8", 40), ("led", "u8", 12), ("fan", "u8", 2), ("gpio", "u8"),
                       ("reserve", "u32"), ("crc", "u32"))
        low_state = _msg(t + "LowState_", *head, ("imu_state", imu), ("motor_state", motor_state, 20),
                         ("bms_state", bms_state), ("foot_force", "i16", 4), ("foot_force_est", "i16", 4),
                         ("tick", "u32"), ("wireless_remote", "u8", 40), ("bit_flag", "u8"), ("adc_reel", "f32"),
                         ("temperature_ntc1", "u8"), ("temperature_ntc2", "u8"), ("power_v", "f32"),
                         ("power_a", "f32"), ("fan_frequency", "u16", 4), ("reserve", "u32"), ("crc", "u32"))
        parts: tuple[Message, ...] = (imu, motor_cmd, motor_state, bms_cmd, bms_state, low_cmd, low_state)
    else:
        imu = _msg(t + "IMUState_", ("quaternion", "f32", 4), ("gyroscope", "f32", 3), ("accelerometer", "f32", 3),
                   ("rpy", "f32", 3), ("temperature", "i16"))
        motor_cmd = _msg(t + "MotorCmd_", ("mode", "u8"), ("q", "f32"), ("dq", "f32"), ("tau", "f32"), ("kp", "f32"),
                         ("kd", "f32"), ("reserve", "u32"))
        motor_state = _msg(t + "MotorState_", ("mode", "u8"), ("q", "f32"), ("dq", "f32"), ("ddq", "f32"),
                           ("tau_est", "f32"), ("temperature", "i16", 2), ("vol", "f32"), ("sensor", "u32", 2),
                           ("motorstate", "u32"), ("reserve", "u32", 4))
        low_cmd = _msg(t + "LowCmd_", ("mode_pr", "u8"), ("mode_machine", "u8"), ("motor_cmd", motor_cmd, 35),
                       ("reserve", "u32", 4), ("crc", "u32"))
        low_state = _msg(t + "LowState_", ("version", "u32", 2), ("mode_pr", "u8"), ("mode_machine", "u8"),
                         ("tick", "u32"), ("imu_state", imu), ("motor_state", motor_state, 35),
                         ("wireless_remote", "u8", 40), ("reserve", "u32", 4), ("crc", "u32"))
        parts = (imu, motor_cmd, motor_state, low_cmd, low_state)
    return {m.name: m for m in parts}


FAMILIES: dict[str, dict[str, Message]] = {name: _family(name) for name in ("unitree_go", "unitree_hg")}
"""``FAMILIES[family][name]``: e.g. ``FAMILIES["unitree_hg"]["LowCmd_"]``."""


def alignment(kind: Union[str, Message]) -> int:
    """C alignment of a field kind: a primitive's size, a struct's largest member alignment."""
    if isinstance(kind, str):
        return struct.calcsize(PRIMITIVES[kind])
    return max(alignment(f.kind) for f in kind.fields)


def c_format(msg: Message) -> str:
    """The ``struct`` format of ``msg`` laid out as a C compiler lays out the struct (natural alignment, the
    struct padded to its alignment), without the byte-order prefix."""
    out, offset = [], 0
    for f in msg.fields:
        pad = -offset % alignment(f.kind)
        if pad:
            out.append(f"{pad}x")
            offset += pad
        one = PRIMITIVES[f.kind] if isinstance(f.kind, str) else c_format(f.kind)
        n = max(f.count, 1)
        out.append(f"{n}{one}" if isinstance(f.kind, str) and n > 1 else one * n)
        offset += n * struct.calcsize("<" + one)
    pad = -offset % alignment(msg)
    if pad:
        out.append(f"{pad}x")
    return "".join(out)


def c_size(msg: Message) -> int:
    """Bytes of the C struct (LowCmd_: 812 for unitree_go, 1004 for unitree_hg)."""
    return struct.calcsize("<" + c_format(msg))


def values(msg: Message, obj: Any) -> list[Any]:
    """Every primitive of ``obj`` (a DDS sample, or anything with the same attributes) in declaration order."""
    out: list[Any] = []
    for f in msg.fields:
        v = getattr(obj, f.name)
        items = list(v) if f.count else [v]
        if isinstance(f.kind, Message):
            for item in items:
                out += values(f.kind, item)
        else:
            out += items
    return out


def pack(msg: Message, obj: Any) -> bytes:
    """``obj`` as the little-endian C struct Unitree's checksum runs over."""
    return struct.pack("<" + c_format(msg), *values(msg, obj))


def blank(msg: Message) -> Any:
    """A message of zeros as nested plain objects (attribute access like a DDS sample; no DDS needed)."""

    class Plain:
        def __repr__(self) -> str:
            return f"{msg.name}({vars(self)})"

    obj = Plain()
    for f in msg.fields:
        if isinstance(f.kind, Message):
            v: Any = [blank(f.kind) for _ in range(f.count)] if f.count else blank(f.kind)
        else:
            zero = 0.0 if f.kind == "f32" else 0
            v = [zero] * f.count if f.count else zero
        setattr(obj, f.name, v)
    return obj


TOPIC_BASE_VELOCITY = "rt/legged_mjx/base_velocity"
"""Not Unitree's: a base velocity estimate for policies that observe ``base_lin_vel`` (the low state has none)."""
BASE_VELOCITY = Message("legged_mjx.msg.dds_.BaseVelocity_", (Field("tick", "u32"), Field("velocity", "f32", 3)))
"""``tick``: the low state's the estimate belongs to; ``velocity``: m/s in the base frame (x forward, y left, z up)."""
