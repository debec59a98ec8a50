"""A drafted spec (``draft.py``) as a readable robot file: every value with a comment saying where it came from,
and the flat and rough tasks (``tools.new_robot`` writes it; ``menagerie:NAME`` trains the same spec)."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

from envs.robots.draft import Draft
from envs.robots.spec_source import INDENT, value_source


def variable(name: str) -> str:
    """``unitree_go2`` -> ``UNITREE_GO2``."""
    text = re.sub(r"\W", "_", name).upper()
    return text if text[:1].isalpha() else "ROBOT_" + text


def mjcf_source(mjcf: Path, out: Path | None, menagerie: tuple[str, str] | None) -> str:
    """How the file names its model: through the Menagerie package, next to itself, or by a path."""
    if menagerie is not None:
        return f"menagerie_xml({menagerie[0]!r}, {menagerie[1]!r})".replace("'", '"')
    if out is None:
        return f'Path("{mjcf}")'
    rel = os.path.relpath(mjcf.resolve(), out.resolve().parent)
    if "/" not in rel:
        return f'Path(__file__).with_name("{rel}")'
    if rel.startswith(".."):
        return f'Path("{mjcf.resolve()}")'
    return f'Path(__file__).parent / "{rel}"'


WIDTH = 116
"""Lines of the drafted file stay within this."""


def _wrapped(items: list[str], indent: str) -> str:
    """``items`` (each ending in a comma) filled into lines of at most WIDTH."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 1 + len(item) <= WIDTH:
            lines[-1] += " " + item
        else:
            lines.append(indent + item)
    return "".join(f"\n{line}" for line in lines)


LIMIT = 120
"""The repo's line length: longer lines with a string literal are split by ``fit_lines``."""
_LITERAL = re.compile(r'"[^"\\]{20,}"')


def fit_lines(text: str) -> str:
    """``text`` with each line over LIMIT split inside its longest string literal at ``|`` (implicit concatenation
    on the next line, indented one more level); lines without such a literal stay as they are."""
    out = []
    for line in text.splitlines(keepends=True):
        literals = list(_LITERAL.finditer(line)) if len(line.rstrip("\n")) > LIMIT else []
        if not literals:
            out.append(line)
            continue
        lit = max(literals, key=lambda x: len(x.group(0)))
        indent = " " * (len(line) - len(line.lstrip()) + len(INDENT))
        head, body, tail = line[:lit.start()], lit.group(0)[1:-1], line[lit.end():]
        parts: list[str] = []
        current = ""
        for piece in re.split(r"(?<=\|)", body):
            width = len(head) + 2 if not parts else len(indent) + 2
            if current and width + len(current) + len(piece) > LIMIT - 4:
                parts.append(current)
                current = ""
            current += piece
        parts.append(current)
        out.append(head + f'"\n{indent}"'.join(f"{p}" for p in parts).join('""') + tail)
    return "".join(out)


def _joints(d: Draft) -> str:
    lines: list[list[str]] = []
    current = ""
    for j in d.spec.joints:
        prefix = re.split(r"[_.\-]", j, maxsplit=1)[0]
        if not lines or prefix != current:
            lines.append([])
        current = prefix
        lines[-1].append(j)
    body = "".join(_wrapped([f'"{j}",' for j in group], INDENT * 2) for group in lines)
    return f"({body}\n{INDENT})"


def _pose(pose: tuple[tuple[str, float], ...]) -> str:
    return "{" + _wrapped([f'"{k}": {value_source(v)},' for k, v in pose], INDENT * 2) + f"\n{INDENT}}}"


def _comment(note: str, indent: str = INDENT) -> str:
    return "".join(f"{line}\n" for line in textwrap.wrap(note, WIDTH, initial_indent=indent + "# ",
                                                        subsequent_indent=indent + "# "))


def _field(name: str, value: str, note: str) -> str:
    return (_comment(note) if note else "") + f"{INDENT}{name}={value},\n"


def _actuators(d: Draft) -> str:
    lines = []
    for g in d.groups:
        lines.append(_comment(("held: " if g.held else "") + g.note, INDENT * 2))
        text = value_source(g.group, INDENT * 2)
        if len(text) + 8 > WIDTH:
            text = text.replace(", kp=", f",\n{INDENT * 3}kp=", 1)
        lines.append(f"{INDENT * 2}{text},\n")
    return "(\n" + "".join(lines) + f"{INDENT})"


def source(d: Draft, origin: str, mjcf: str) -> str:
    """The robot file's text; ``origin``: what it was drafted from; ``mjcf``: the source of its ``mjcf`` value."""
    s, n = d.spec, d.notes
    var = variable(s.name)
    feet = "foot_geoms" if s.foot_geoms else "foot_bodies"
    fields = [
        _field("name", f'"{s.name}"', ""),
        _field("mjcf", mjcf, f"drafted from {origin}"),
        _field("base_body", f'"{s.base_body}"', n["base_body"]),
        _field("joints", _joints(d), n["joints"]),
        _field("default_pose", _pose(s.default_pose), n["default_pose"]),
        _field("actuators", _actuators(d), n["actuators"]),
        _field("base_height", value_source(s.base_height), n["base_height"]),
        _field("action_scale", value_source(s.action_scale), n["action_scale"]),
        _field(feet, value_source(getattr(s, feet)), n["feet"]),
        _field("termination_contacts", value_source(s.termination_contacts), n["termination_contacts"]),
        _field("penalized_contacts", value_source(s.penalized_contacts), n["penalized_contacts"]),
    ]
    if s.held:
        fields.append(_field("held", value_source(s.held), n["held"]))
    if s.welded:
        fields.append(_field("welded", value_source(s.welded), n["welded"]))
    fields.append(_field("sim", value_source(s.sim), n["sim"]))
    twins = ", ".join(f"{a} <-> {b}" for a, b in d.mirror_pairs[:4]) + (", ..." if len(d.mirror_pairs) > 4 else "")
    mirror = _comment(f"left-right twins from the names (symmetry augmentation): {twins}" if d.mirror_pairs
                      else "no left-right twins found in the names: declare RobotSpec.mirror for symmetry augmentation",
                      "")
    return fit_lines(_header(d, origin, mjcf) + f"{var} = RobotSpec(\n" + "".join(fields) + ")\n" + mirror + "\n"
                     + _tasks(d, var))


def _header(d: Draft, origin: str, mjcf: str) -> str:
    spec_names = sorted({type(x).__name__ for x in (*d.spec.foot_geoms, *d.spec.held, *d.spec.welded)
                         if not isinstance(x, str)} | {"ActuatorGroup", "RobotSpec", "SimOverrides"})
    imports = ["from configs.drafted import drafted_task", f"from envs.robots.spec import {', '.join(spec_names)}"]
    if mjcf.startswith("menagerie_xml"):
        imports.insert(1, "from envs.robots.menagerie import menagerie_xml")
    guessed = "".join(textwrap.fill(g, WIDTH, initial_indent="- ", subsequent_indent="  ") + "\n"
                      for g in d.guesses)
    guessed = f"Guessed (the file does not say):\n{guessed}\n" if d.guesses else ""
    head = f'''"""{d.spec.name}: a robot file drafted by

    python -m tools.new_robot {origin}

{guessed}Review every value: each says where it came from. Then:

    python -m tools.check_robot THIS_FILE.py:flat --fix --write   # settings that pass the robot check
    python train.py --task THIS_FILE.py:flat                      # or :rough
"""

'''
    return head + ("from pathlib import Path\n\n" if "Path(" in mjcf else "") + "\n".join(imports) + "\n\n"


def _tasks(d: Draft, var: str) -> str:
    args = [f"{k}={value_source(v)}," for k, v in d.biped_env.items()] + ([] if d.mirror_pairs else ["mirror=False,"])
    extra = "," + _wrapped(args, INDENT) + "\n" if args else ""
    what = "the built-in humanoid task's settings, sized by its standing height" if d.kind == "biped" else (
        "the flat and rough tasks' settings")
    return (_comment(f"the {d.kind}'s tasks: configs/drafted.py ({what})", "")
            + f'flat = drafted_task("{d.spec.name}-flat", {var}, "{d.kind}"{extra})\n'
            + f'rough = drafted_task("{d.spec.name}-rough", {var}, "{d.kind}", terrain="rough"{extra})\n')
