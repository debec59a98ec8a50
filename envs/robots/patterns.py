"""Short, readable regexes for a set of names (what ``tools.new_robot`` and the check's ``--fix`` write into a
spec file): ``FL_hip_joint, FR_hip_joint, RL_hip_joint, RR_hip_joint`` -> ``.*_hip_joint`` when that matches
nothing else among the names it must tell apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envs.robots.sides import side

_SEP = re.compile(r"[_.\-]")


def _suffix(name: str) -> str:
    """The name after its side marker (``FL_hip_joint`` -> ``_hip_joint``, ``left_knee`` -> ``_knee``)."""
    if side(name) is None:
        return name
    parts = _SEP.split(name, maxsplit=1)
    return name[len(parts[0]):] if len(parts) > 1 else name


def covering_regex(names: Sequence[str], among: Sequence[str]) -> str:
    """A regex that fully matches every one of ``names`` and none of the other names of ``among``: the side marker
    replaced by ``.*`` per distinct remainder (``.*_hip_joint``), or failing that, the names themselves."""
    names = list(dict.fromkeys(names))
    others = [n for n in among if n not in names]
    if not others:
        return ".*"
    parts = list(dict.fromkeys((".*" + re.escape(_suffix(n))) if side(n) is not None else re.escape(n)
                               for n in names))
    candidate = "|".join(parts)
    rx = re.compile(candidate)
    if len(parts) < len(names) and all(rx.fullmatch(n) for n in names) and not any(rx.fullmatch(o) for o in others):
        return candidate
    return "|".join(re.escape(n) for n in names)
