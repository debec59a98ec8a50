"""The DDS types of Unitree's low-level messages for CycloneDDS's Python binding, built from ``messages.py``.

Each class carries Unitree's type name (``unitree_go.msg.dds_.LowCmd_`` ...), final extensibility and sequential
member ids, as the classes Unitree generates from its IDL files do: the same type, as far as DDS is concerned.
Importing this module needs ``cyclonedds`` (``pip install -e ".[unitree]"``); nothing else in the runtime does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import cyclonedds.idl as idl
import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as types

from deploy.unitree.messages import FAMILIES, Field, Message

_PRIMITIVE = {"u8": types.uint8, "i8": types.int8, "u16": types.uint16, "i16": types.int16, "u32": types.uint32,
              "i32": types.int32, "f32": types.float32}
_CLASSES: dict[str, Any] = {}
"""typename -> class (each built once: DDS needs one Python type per type name)."""


def _annotation(f: Field) -> Any:
    one = _PRIMITIVE[f.kind] if isinstance(f.kind, str) else idl_class(f.kind)
    return types.array[one, f.count] if f.count else one  # type: ignore[misc]


def idl_class(msg: Message) -> Any:
    """The IdlStruct class of ``msg`` (nested types first)."""
    if msg.typename in _CLASSES:
        return _CLASSES[msg.typename]
    bases = (idl.IdlStruct,)
    namespace = idl.IdlMeta.__prepare__(msg.name, bases, typename=msg.typename)
    for f in msg.fields:
        namespace["__annotations__"][f.name] = _annotation(f)
    cls: Any = idl.IdlMeta(msg.name, bases, namespace)
    cls = dataclasses.dataclass(annotate.final(annotate.autoid("sequential")(cls)))
    _CLASSES[msg.typename] = cls
    return cls


def new(msg: Message) -> Any:
    """A sample of zeros."""
    cls = idl_class(msg)
    kwargs: dict[str, Any] = {}
    for f in msg.fields:
        if isinstance(f.kind, Message):
            kwargs[f.name] = [new(f.kind) for _ in range(f.count)] if f.count else new(f.kind)
        else:
            zero = 0.0 if f.kind == "f32" else 0
            kwargs[f.name] = [zero] * f.count if f.count else zero
    return cls(**kwargs)


def low_cmd(family: str) -> Any:
    return idl_class(FAMILIES[family]["LowCmd_"])


def low_state(family: str) -> Any:
    return idl_class(FAMILIES[family]["LowState_"])
