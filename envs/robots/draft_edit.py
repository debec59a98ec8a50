"""``check_robot --fix --write`` on a robot file whose actuator groups carry comments (a drafted file's provenance:
"effort limit guessed ...", "kp = 1 x effort limit"): each changed ``ActuatorGroup(...)`` is rewritten in place,
with a comment line above it saying what ``--fix`` changed and why, so the comments above it stay and still read
true (they say where the values came from; the new line says what replaced them). Lines stay within 120
characters. The other fields are rewritten by ``envs/robots/spec_source.edited``.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap

from envs.robots.draft_source import LIMIT, fit_lines
from envs.robots.spec import ActuatorGroup, RobotSpec
from envs.robots.spec_source import INDENT, edited, value_source


def _group_calls(source: str, var: str) -> list[ast.Call] | None:
    """The ``ActuatorGroup(...)`` calls of ``var``'s ``actuators=(...)``, or None when it is not such a tuple."""
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in node.targets)):
            continue
        if not isinstance(node.value, ast.Call):
            return None
        kw = next((k for k in node.value.keywords if k.arg == "actuators"), None)
        if kw is None or not isinstance(kw.value, ast.Tuple):
            return None
        calls = [e for e in kw.value.elts if isinstance(e, ast.Call)]
        return calls if len(calls) == len(kw.value.elts) else None
    return None


def _line_starts(source: str) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _group_text(g: ActuatorGroup, indent: str) -> str:
    text = value_source(g, indent)
    if len(indent) + len(text) + 1 > LIMIT:
        text = text.replace(", kp=", f",\n{indent}{INDENT}kp=", 1)
    return text


def edited_keeping_comments(source: str, var: str, old: RobotSpec, new: RobotSpec, changes: list[str],
                            comment: str = "check_robot --fix") -> str:
    """``source`` with ``new``'s values (``spec_source.edited``), changed actuator groups rewritten one by one with
    ``comment`` and their lines of ``changes`` (``"<joints>: ..."``) above them when the groups keep their joints
    and order; otherwise as ``edited`` does."""
    calls = _group_calls(source, var)
    olds, news = old.actuators, new.actuators
    same_joints = (not isinstance(olds, str) and not isinstance(news, str) and calls is not None
                   and len(calls) == len(olds) == len(news)
                   and all(a.joints == b.joints for a, b in zip(olds, news, strict=True)))
    if not same_joints:
        return fit_lines(edited(source, var, old, new, comment=comment))
    assert calls is not None and not isinstance(olds, str) and not isinstance(news, str)
    starts = _line_starts(source)
    edits = []
    for call, a, b in zip(calls, olds, news, strict=True):
        if a == b:
            continue
        indent = " " * call.col_offset
        why = "; ".join(c.removeprefix(f"{a.joints}: ") for c in changes if c.startswith(f"{a.joints}: "))
        note = textwrap.fill(f"{comment}: {why or 'changed'}", LIMIT, initial_indent=indent + "# ",
                             subsequent_indent=indent + "# ")
        assert call.end_lineno is not None and call.end_col_offset is not None
        start = starts[call.lineno - 1] + call.col_offset
        end = starts[call.end_lineno - 1] + len(source[starts[call.end_lineno - 1]:].encode()[
            :call.end_col_offset].decode())
        edits.append((starts[call.lineno - 1], start, end, note + "\n" + indent + _group_text(b, indent)))
    out = source
    for line_start, _, end, text in sorted(edits, reverse=True):
        out = out[:line_start] + text + out[end:]
    rest = dataclasses.replace(old, actuators=new.actuators)
    return fit_lines(edited(out, var, rest, new, comment=comment) if rest != new else out)
