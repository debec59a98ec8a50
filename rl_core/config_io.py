"""Generic machinery for frozen dataclass configs: type checks, CLI overrides, field docs, dict round trip.

Every config in the project is a frozen dataclass whose fields carry an attribute docstring. This module
checks field types, applies ``section.field=value`` overrides, turns configs into plain dicts (for
``config.yaml`` and checkpoints) and back, and reads the field docstrings for ``--help``.

A field that moved declares its old key where it lived: a config dataclass's ``MOVED_KEYS`` class attribute maps
an old dotted key (relative to that dataclass) to its new one. ``from_dict`` (a saved config: a checkpoint's)
reads an old key at its new place; an override with an old key is one line naming the new key.

A field added after configs were saved without it, whose value then was not what the task's default is now,
declares that value: a config dataclass's ``ADDED_KEYS`` maps its dotted key to the value the code used before
the key existed. ``from_dict`` reads a saved config that lacks the key with that value, not today's default.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import textwrap
import types
import typing
from typing import Any, Literal, Union

import yaml

from contract.errors import ConfigError


# --------------------------------------------------------------------------------------------- types
def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_name(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"a list of {_type_name(typing.get_args(tp)[0])}"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"a {tp.__name__} section"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(tp, str(tp))


def _coerce(value: Any, tp: Any, name: str) -> Any:
    """Return ``value`` converted to the annotated type ``tp`` or raise a one-line ConfigError."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        if value in typing.get_args(tp):
            return value
        raise ConfigError(name, value, _type_name(tp))
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, name)
            except ConfigError:
                pass
        raise ConfigError(name, value, _type_name(tp))
    if origin is tuple:
        if isinstance(value, (list, tuple)):
            (item_tp, *_rest) = typing.get_args(tp)
            return tuple(_coerce(v, item_tp, f"{name}[{i}]") for i, v in enumerate(value))
        raise ConfigError(name, value, _type_name(tp))
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(name, value, _type_name(tp))
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ConfigError(name, value, _type_name(tp))
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(name, value, _type_name(tp))
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(name, value, _type_name(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        raise ConfigError(name, value, _type_name(tp))
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check_types(cfg: Any, prefix: str = "") -> None:
    """Check every field of a dataclass instance against its annotation (called from ``__post_init__``)."""
    cls: type = type(cfg)  # not type[Any], which mypy does not take as hashable
    hints = _hints(cls)
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        coerced = _coerce(value, hints[f.name], prefix + f.name)
        if coerced is not value:
            object.__setattr__(cfg, f.name, coerced)


def require(cond: bool, field: str, value: Any, allowed: str) -> None:
    """Raise a one-line ConfigError unless ``cond`` holds."""
    if not cond:
        raise ConfigError(field, value, allowed)


# ------------------------------------------------------------------------------------------- docs
@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """Map field name -> attribute docstring (the string literal written under the field)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, nxt in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def describe(cfg: Any, prefix: str = "") -> list[str]:
    """Lines ``section.field = default  (type)  doc`` for every leaf field, for ``--help``."""
    lines = []
    cls: type = type(cfg)  # not type[Any], which mypy does not take as hashable
    docs = field_docs(cls)
    hints = _hints(cls)
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            lines.append(f"[{prefix}{f.name}] {type(value).__name__}")
            lines += describe(value, prefix + f.name + ".")
        else:
            shown = list(value) if isinstance(value, tuple) else value
            text = yaml.safe_dump(shown, default_flow_style=True).strip().removesuffix('...').strip()
            lines.append(f"  {prefix}{f.name}={text}  ({_type_name(hints[f.name])})  {docs.get(f.name, '')}")
    return lines


# -------------------------------------------------------------------------------------- overrides
def parse_override(text: str) -> tuple[str, Any]:
    """``'algorithm.learning_rate=3e-4'`` -> ``('algorithm.learning_rate', 0.0003)`` (values parsed as YAML)."""
    if "=" not in text:
        raise ConfigError("override", text, "KEY=VALUE, e.g. algorithm.learning_rate=3e-4")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    # YAML reads '3e-4' as a string; accept numbers written that way.
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            pass
    return key.strip(), value


def apply_overrides(cfg: Any, overrides: dict[str, Any], _prefix: str = "") -> Any:
    """Return a copy of ``cfg`` with dotted-key overrides applied; unknown keys raise a one-line error."""
    nested: dict[str, Any] = {}
    moved = getattr(type(cfg), "MOVED_KEYS", {})
    for key, value in overrides.items():
        if key in moved:
            raise ConfigError("override key", _prefix + key, f"{_prefix + moved[key]} (the field's new key)")
        head, _, rest = key.partition(".")
        names = [f.name for f in dataclasses.fields(cfg)]
        if head not in names:
            raise ConfigError("override key", _prefix + key,
                              "one of " + ", ".join(_prefix + n for n in names) + " (see --help)")
        current = getattr(cfg, head)
        if rest:
            if not dataclasses.is_dataclass(current):
                raise ConfigError("override key", _prefix + key, f"'{_prefix + head}' has no sub-fields")
            nested.setdefault(head, {})[rest] = value
        else:
            if dataclasses.is_dataclass(current):
                example = f"{_prefix + head}.{dataclasses.fields(current)[0].name}=..."
                raise ConfigError("override key", _prefix + key, f"a field of '{_prefix + head}', e.g. {example}")
            nested[head] = value
    changes = {}
    for head, value in nested.items():
        current = getattr(cfg, head)
        nested_cfg = isinstance(value, dict) and dataclasses.is_dataclass(current)
        changes[head] = apply_overrides(current, value, f"{_prefix}{head}.") if nested_cfg else value
    return dataclasses.replace(cfg, **changes)


def flatten(overrides: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dict -> dotted keys (leaves only)."""
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, dict):
            out.update(flatten(value, prefix + key + "."))
        else:
            out[prefix + key] = value
    return out


def to_dict(cfg: Any) -> dict[str, Any]:
    """Plain dict of builtins (tuples become lists) for YAML and checkpoints."""
    def conv(v: Any) -> Any:
        if dataclasses.is_dataclass(v):
            return {f.name: conv(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        return v
    return conv(cfg)


def moved_key(cfg: Any, key: str) -> str:
    """``key`` (dotted, relative to ``cfg``) at its new place when a config dataclass on its path declares it moved
    (``MOVED_KEYS``), else ``key`` itself."""
    prefix, node, rest = "", cfg, key
    while dataclasses.is_dataclass(node):
        moved = getattr(type(node), "MOVED_KEYS", {})
        if rest in moved:
            return prefix + moved[rest]
        head, _, rest = rest.partition(".")
        if not rest or head not in {f.name for f in dataclasses.fields(node)}:
            break
        prefix, node = prefix + head + ".", getattr(node, head)
    return key


def added_keys(cfg: Any, prefix: str = "") -> dict[str, Any]:
    """Every ``ADDED_KEYS`` entry of ``cfg``'s config dataclasses, by its dotted key relative to ``cfg``."""
    out = {prefix + key: value for key, value in getattr(type(cfg), "ADDED_KEYS", {}).items()}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update(added_keys(value, f"{prefix}{f.name}."))
    return out


def from_dict(template: Any, data: dict[str, Any]) -> Any:
    """Rebuild a config of the same shape as ``template`` from a plain dict (unknown keys raise); a key that moved
    since the dict was written is read at its new place (``moved_key``), a key added since with the value the
    code used before it (``added_keys``)."""
    values = {moved_key(template, k): v for k, v in flatten(data).items()}
    return apply_overrides(template, added_keys(template) | values)


def dump_yaml(cfg: Any) -> str:
    return yaml.safe_dump(to_dict(cfg), sort_keys=False)
