"""A RobotSpec's values as Python source, and a robot file edited in place: what ``check_robot --fix`` prints as a
diff (and writes with ``--write``) and what ``tools.new_robot`` writes.

Only the keyword arguments that changed are rewritten (``actuators=...``, ``sim=...``); the rest of the file, its
comments included, is left as it is.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from envs.robots.spec import RobotSpec

INDENT = "    "


def value_source(value: Any, indent: str = INDENT) -> str:
    """Python source of a spec value: numbers, strings, tuples, dicts and the spec's dataclasses (only the fields
    that differ from their defaults); tuples of dataclasses one per line."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = []
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
            if default is not dataclasses.MISSING and v == default:
                continue
            parts.append(f"{f.name}={value_source(v, indent + INDENT)}")
        return f"{type(value).__name__}({', '.join(parts)})"
    if isinstance(value, tuple):
        if value and all(dataclasses.is_dataclass(v) for v in value):
            inner = "".join(f"\n{indent}{INDENT}{value_source(v, indent + INDENT)}," for v in value)
            return f"({inner}\n{indent})"
        items = ", ".join(value_source(v, indent) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{value_source(k)}: {value_source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return repr(float(f"{value:.6g}"))
    if isinstance(value, Path):
        return f"Path({_string(str(value))})"
    if isinstance(value, str):
        return _string(value)
    return repr(value)


def _string(text: str) -> str:
    """A double-quoted Python string literal (the repo's style)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'



def changed_fields(old: RobotSpec, new: RobotSpec) -> list[str]:
    return [f.name for f in dataclasses.fields(RobotSpec) if getattr(old, f.name) != getattr(new, f.name)]


def _spec_call(tree: ast.Module, var: str) -> ast.Call:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == var for t in targets):
            assert isinstance(node, (ast.Assign, ast.AnnAssign))
            value = node.value
            if isinstance(value, ast.Call):
                return value
    raise LookupError(f"no module-level call assigned to {var}")


def _offset(lines: list[str], line: int, col: int) -> int:
    """Character offset of (1-based line, 0-based UTF-8 byte column) in the joined text."""
    before = sum(len(x) for x in lines[:line - 1])
    return before + len(lines[line - 1].encode()[:col].decode())


_LINE_END = re.compile(r",?[ \t]*(#[^\n]*)?")


def edited(source: str, var: str, old: RobotSpec, new: RobotSpec, comment: str = "") -> str:
    """``source`` with the keyword arguments of the call assigned to ``var`` that differ between ``old`` and
    ``new`` rewritten (or added before the closing parenthesis), each marked with ``comment``; the spec module's
    names the new values use are imported."""
    tree = ast.parse(source)
    call = _spec_call(tree, var)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    mark = f"  # {comment}" if comment else ""
    for name in changed_fields(old, new):
        kw = next((k for k in call.keywords if k.arg == name), None)
        indent = " " * (kw.col_offset if kw is not None else call.col_offset + 4)
        text = value_source(getattr(new, name), indent)
        if kw is not None:
            v = kw.value
            assert v.end_lineno is not None and v.end_col_offset is not None
            start, end = _offset(lines, v.lineno, v.col_offset), _offset(lines, v.end_lineno, v.end_col_offset)
            rest = _LINE_END.match(source, end)
            assert rest is not None
            comma = "," if rest.group(0).startswith(",") else ""
            if "\n" in text:
                text = text.replace("(", "(" + mark, 1) + comma
            else:
                text = text + comma + mark
            edits.append((start, rest.end(), text))
        else:
            assert call.end_lineno is not None and call.end_col_offset is not None
            end = _offset(lines, call.end_lineno, call.end_col_offset) - 1
            head = source[:end].rstrip()
            sep = "" if head.endswith(",") or head.endswith("(") else ","
            edits.append((len(head), end, f"{sep}\n{indent}{name}={text},{mark}\n"))
    out = source
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return _imported(out, [type(getattr(new, n)).__name__ for n in changed_fields(old, new)] + [
        type(x).__name__ for n in changed_fields(old, new) if isinstance(getattr(new, n), tuple)
        for x in getattr(new, n)])


def _imported(source: str, names: list[str]) -> str:
    """``source`` with ``from envs.robots.spec import X`` added for each of ``names`` (spec classes) it lacks."""
    import envs.robots.spec as spec_module

    tree = ast.parse(source)
    have = {a.asname or a.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names}
    have |= {n.id for node in tree.body if isinstance(node, ast.Assign) for n in node.targets
             if isinstance(n, ast.Name)}
    missing = sorted({n for n in names if hasattr(spec_module, n) and n not in have})
    if not missing:
        return source
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    line = (imports[-1].end_lineno or 0) if imports else 0
    lines = source.splitlines(keepends=True)
    lines.insert(line, f"from envs.robots.spec import {', '.join(missing)}  # added by check_robot --fix\n")
    return "".join(lines)


def diff(path: Path, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


def write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def spec_location(spec: RobotSpec) -> tuple[Path, str] | None:
    """(file, module-level variable) where ``spec`` is written as a call (``RobotSpec(...)`` or
    ``dataclasses.replace(...)``) in a loaded module: a user's robot file or a robot module of this repo."""
    import sys

    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not path or not path.endswith(".py") or "site-packages" in path or "/lib/python" in path:
            continue
        for var, value in list(vars(module).items()):
            if isinstance(value, RobotSpec) and value == spec:
                try:
                    _spec_call(ast.parse(Path(path).read_text()), var)
                except (LookupError, OSError, SyntaxError):
                    continue
                return Path(path), var
    return None
