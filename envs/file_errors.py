"""Errors from a user's task file (``--task path.py:flat``) with a place: the file's line, and the spec field.

An exception raised while the file imports (a NameError, a SyntaxError, a tuple that lost its trailing comma and
reached ``RobotSpec`` as a bare value) becomes one line ``path:line ...: Type: message``, with ``field F: expected
..., got ...`` when a dataclass field (``RobotSpec``, ``ActuatorGroup``, ...) holds a value of the wrong type.
After the import, the robot specs the file defines are checked the same way (``kp="20"`` imports fine and would
fail deep in the assembly): ``field_problems`` on each, the line found in the file's source.
"""

from __future__ import annotations

import ast
import dataclasses
import numbers
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Optional, Union

TRAILING_COMMA = "a one-element tuple needs a trailing comma: (x,)"


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def describe(tp: Any) -> str:
    """``tuple[ActuatorGroup, ...]`` -> ``a tuple of ActuatorGroup``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Union:
        return " or ".join(describe(a) for a in args if a is not type(None)) + (
            " or None" if type(None) in args else "")
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            element = describe(args[0]).removeprefix("a ").removeprefix("an ")
            return f"a tuple of {'pairs' + element[4:] if element.startswith('pair ') else element}"
        return f"a pair ({', '.join(describe(a) for a in args)})" if len(args) == 2 else f"a tuple {args}"
    if tp is float:
        return "a number"
    return {int: "an integer", str: "a string", bool: "True or False", Path: "a path"}.get(tp, _name(tp))


def matches(value: Any, tp: Any) -> bool:
    """Whether ``value`` fits ``tp`` as the project's specs accept it (a str for a tuple of str, a dict for pairs,
    an int for a float); types it does not know match anything."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return True
    if origin is Union:
        return any(matches(value, a) for a in args)
    if origin is Literal:
        return value in args
    if tp is type(None):
        return value is None
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            if isinstance(value, str):
                return args[0] is str
            if isinstance(value, Mapping) and typing.get_origin(args[0]) is tuple:
                return all(matches(kv, args[0]) for kv in value.items())
            return isinstance(value, (tuple, list)) and all(matches(v, args[0]) for v in value)
        return isinstance(value, (tuple, list)) and len(value) == len(args) and all(
            matches(v, a) for v, a in zip(value, args, strict=True))
    if tp is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if tp is Path:
        return isinstance(value, (str, Path))
    if isinstance(tp, type):
        return isinstance(value, tp)
    return True


def _element_type(tp: Any) -> Any:
    args = typing.get_args(tp)
    if typing.get_origin(tp) is Union:
        for a in args:
            if (e := _element_type(a)) is not None:
                return e
    if typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def field_problems(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``(field path, problem)`` for each field of the dataclass ``obj`` (and of dataclasses inside it) whose value
    does not fit its annotation, e.g. ``("actuators", "expected a tuple of ActuatorGroup, got ActuatorGroup (a
    one-element tuple needs a trailing comma: (x,))")``."""
    try:
        hints = typing.get_type_hints(type(obj))
    except Exception:  # an annotation that does not resolve: nothing to say
        return []
    out: list[tuple[str, str]] = []
    for f in dataclasses.fields(obj):
        if f.name not in hints or not hasattr(obj, f.name):
            continue
        value, tp, path = getattr(obj, f.name), hints[f.name], prefix + f.name
        if not matches(value, tp):
            element = _element_type(tp)
            hint = f" ({TRAILING_COMMA})" if element is not None and matches(value, element) else ""
            got = repr(value) if isinstance(value, (str, int, float)) else type(value).__name__
            out.append((path, f"expected {describe(tp)}, got {got}{hint}"))
            continue
        items = value if isinstance(value, tuple) else (value,)
        for i, item in enumerate(items):
            if dataclasses.is_dataclass(item) and not isinstance(item, type):
                out += field_problems(item, f"{path}[{i}]." if isinstance(value, tuple) else f"{path}.")
    return out


def _user_frames(tb: Optional[TracebackType], path: Path) -> list[TracebackType]:
    target = path.resolve()
    out = []
    while tb is not None:
        try:
            if Path(tb.tb_frame.f_code.co_filename).resolve() == target:
                out.append(tb)
        except OSError:
            pass
        tb = tb.tb_next
    return out


def _dataclass_under_construction(tb: Optional[TracebackType]) -> Any:
    """The innermost ``self`` of a dataclass ``__init__`` / ``__post_init__`` on the traceback (None: none)."""
    found = None
    while tb is not None:
        frame = tb.tb_frame
        obj = frame.f_locals.get("self")
        if frame.f_code.co_name in ("__init__", "__post_init__") and dataclasses.is_dataclass(obj):
            found = obj
        tb = tb.tb_next
    return found


def location(path: Path, e: BaseException) -> str:
    """``path:line`` of the file's innermost line on the traceback of ``e`` (``path`` alone when it has none)."""
    line: Optional[int] = None
    if isinstance(e, SyntaxError) and e.filename and Path(e.filename).resolve() == path.resolve():
        line = e.lineno
    else:
        frames = _user_frames(e.__traceback__, path)
        if frames:
            line = frames[-1].tb_lineno
    return f"{path}:{line}" if line is not None else str(path)


def import_error(path: Path, e: BaseException) -> str:
    """``path:line does not import: [field F of Spec: problem; ]Type: message`` for an exception raised while
    ``path`` was executed."""
    detail = " ".join(str(e).split())
    if isinstance(e, SyntaxError):
        detail = " ".join(str(e.msg).split())
    where = location(path, e)
    obj = _dataclass_under_construction(e.__traceback__)
    problems = field_problems(obj) if obj is not None else []
    if problems and where != str(path):  # the call's first line: point at the field's keyword after it
        keyword = _keyword_line(path, int(where.rsplit(":", 1)[1]), problems[0][0].split(".")[0].split("[")[0])
        where = f"{path}:{keyword}" if keyword is not None else where
    field = (f"field {problems[0][0]} of {type(obj).__name__}: {problems[0][1]}; " if problems else "")
    return f"{where} does not import: {field}{type(e).__name__}: {detail}"


def _keyword_line(path: Path, start: int, name: str) -> Optional[int]:
    """The line of the first ``name=`` keyword at or after line ``start`` of the file (None: none)."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    lines = sorted(k.lineno for k in ast.walk(tree)
                   if isinstance(k, ast.keyword) and k.arg == name and k.lineno >= start)
    return lines[0] if lines else None


def field_line(source: str, variable: str, field_path: str) -> Optional[int]:
    """The line of ``field_path``'s keyword (``actuators[1].kp``: the second ``kp=``) in the assignment of
    ``variable`` in ``source``; the assignment's line when the keyword is not found; None without one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    parts = field_path.replace("]", "").split(".")
    last = parts[-1].split("[")[0]
    index = next((int(p.split("[")[1]) for p in parts[:-1] if "[" in p), 0)
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            keywords = [k for k in ast.walk(node) if isinstance(k, ast.keyword) and k.arg == last]
            keywords.sort(key=lambda k: (k.lineno, k.col_offset))
            if keywords:
                return keywords[min(index, len(keywords) - 1)].lineno
            return node.lineno
    return None


def spec_problems(path: Path, module_vars: Mapping[str, Any], spec_type: type) -> Optional[str]:
    """The first field of a module-level ``spec_type`` instance whose value has the wrong type, as ``path:line:
    robot spec 'name' field F: problem`` (None: all fit)."""
    source = path.read_text()
    for variable, value in module_vars.items():
        if isinstance(value, spec_type):
            problems = field_problems(value)
            if problems:
                field, problem = problems[0]
                line = field_line(source, variable, field)
                where = f"{path}:{line}" if line is not None else str(path)
                name = getattr(value, "name", variable)
                return f"{where}: robot spec '{name}' field {field}: {problem}"
    return None


SPEC_ERROR = re.compile(r"^robot spec '([^']*)' field ([\w.\[\]]+)")
"""The start of a spec error (``envs/robots/names.py``): the robot's name and the field."""


def with_line(message: str, path: Path, module_vars: Mapping[str, Any], spec_type: type) -> str:
    """``message`` (a spec error raised after the import, when the spec is resolved against its MJCF) prefixed
    with ``path:line`` of the field's keyword in the file; unchanged when it names no field of a spec there."""
    m = SPEC_ERROR.match(message)
    if m is None:
        return message
    for variable, value in module_vars.items():
        if isinstance(value, spec_type) and getattr(value, "name", None) == m.group(1):
            line = field_line(path.read_text(), variable, m.group(2))
            if line is not None:
                return f"{path}:{line}: {message}"
    return message
