"""Name / regex matching for robot specs, with one-line errors that list what the model has."""

from __future__ import annotations

import re
from collections.abc import Sequence

from contract.errors import UserError

MAX_LISTED = 40
"""At most this many of the model's names are listed in an error."""


def spec_error(robot: str, field: str, problem: str, available: Sequence[str], what: str) -> UserError:
    """``robot spec 'go2' field joints: <problem>; the model's <what>: a, b, c``."""
    names = list(dict.fromkeys(available))  # each candidate once (a body with 4 geoms is one body)
    listed = ", ".join(names[:MAX_LISTED]) + (f", ... ({len(names)} in all)" if len(names) > MAX_LISTED else "")
    return UserError(f"robot spec '{robot}' field {field}: {problem}; the model's {what}: {listed or '(none)'}")


def _singular(what: str) -> str:
    return what[:-3] + "y" if what.endswith("ies") else what[:-1] if what.endswith("s") else what


def _compile(robot: str, field: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise UserError(f"robot spec '{robot}' field {field}: {pattern!r} is not a valid regex ({e})") from None


def match_each(robot: str, field: str, patterns: Sequence[str], names: Sequence[str], what: str,
               unique: bool = True) -> list[int]:
    """Indices into ``names`` matched by the patterns, in pattern order, then ``names`` order within a pattern.

    Every pattern must match at least one name; with ``unique``, no name may be matched twice.
    """
    out: list[int] = []
    for p in patterns:
        rx = _compile(robot, field, p)
        hits = [i for i, n in enumerate(names) if rx.fullmatch(n)]
        if not hits:
            raise spec_error(robot, field, f"{p!r} matches no {_singular(what)}", names, what)
        for i in hits:
            if unique and i in out:
                raise spec_error(robot, field, f"{names[i]!r} is matched twice (again by {p!r})", names, what)
            out.append(i)
    return out


def assign(robot: str, field: str, patterns: Sequence[str], targets: Sequence[str], what: str) -> list[int]:
    """For each target name, the index of the one pattern that matches it (each pattern must match something)."""
    compiled = [_compile(robot, field, p) for p in patterns]
    for p, rx in zip(patterns, compiled, strict=True):
        if not any(rx.fullmatch(t) for t in targets):
            raise spec_error(robot, field, f"{p!r} matches no {_singular(what)}", targets, what)
    unmatched = [t for t in targets if not any(rx.fullmatch(t) for rx in compiled)]
    if len(unmatched) > 1:
        raise spec_error(robot, field, f"joints {', '.join(map(repr, unmatched))} are matched by no entry", targets,
                         what)
    out = []
    for t in targets:
        hits = [k for k, rx in enumerate(compiled) if rx.fullmatch(t)]
        if len(hits) != 1:
            listed = ", ".join(repr(patterns[k]) for k in hits)
            problem = (f"joint {t!r} is matched by no entry" if not hits
                       else f"joint {t!r} is matched by {len(hits)} entries ({listed})")
            raise spec_error(robot, field, problem, targets, what)
        out.append(hits[0])
    return out
