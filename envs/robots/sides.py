"""Left and right from names: the naming conventions of common robot files, or a map a robot spec declares.

Conventions, tried in this order on each name (the first that applies decides):

========================  ==============================================  ===================================
convention                example (left <-> right)                        robots
========================  ==============================================  ===================================
leg, front/rear first     ``FL_calf_joint`` <-> ``FR_calf_joint``         legged_gym, Unitree (also ``HL``/``HR``)
leg, side first           ``LF_HAA`` <-> ``RF_HAA``, ``LH_KFE``           ANYbotics (LF / RF / LH / RH)
word                      ``left_knee_joint`` <-> ``right_knee_joint``    Menagerie humanoids (also Left / LEFT)
letter                    ``l_hip_roll``, ``L_knee``, ``hip_r``           Fourier, many URDF exports
========================  ==============================================  ===================================

A letter counts as a side only when it stands alone between separators (``_``, ``.``, ``-``) and its twin exists
(``waist_r`` without ``waist_l`` is a roll joint, not a right one). Names match case-sensitively except that the
letter and leg conventions accept lower case. A robot whose names follow none of these declares ``RobotSpec.mirror``
(a ``MirrorMap``): pairs of name fragments the mirror exchanges, and the joints whose angle changes sign.

Twin joints are assumed to have the same axes (Menagerie's and Unitree's files do): a joint that turns about x or z
(roll, yaw, abduction: ``FLIPPED``) changes sign under the mirror, one that turns about y (pitch, knee) does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from contract.errors import UserError


@dataclass(frozen=True)
class MirrorMap:
    """Left-right twins declared by a robot spec, for names no convention covers (``RobotSpec.mirror``)."""

    swap: tuple[tuple[str, str], ...]
    """Pairs of name fragments the mirror exchanges wherever they occur, e.g. ``(("links", "rechts"),)`` or whole
    names ``(("arm_a", "arm_b"),)``; a name with neither fragment is on the mid-plane (its own twin)."""
    flipped: str = ""
    """Regex searched in each joint name: joints whose angle changes sign under the mirror (they turn about x or
    z: roll, yaw, abduction); empty: none."""
    left: str = ""
    """Which fragment of each pair is the left one: the first (``""`` or ``"first"``) or ``"second"``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "swap", tuple((str(a), str(b)) for a, b in self.swap))


FLIPPED = re.compile(r"roll|yaw|abduction|adduction|abad|haa|(^|[_.])hx($|[_.])|(^|_)hip_joint$", re.IGNORECASE)
"""Joints whose name contains one of these change sign under the mirror (about x or z: roll, yaw, hip abduction:
ANYbotics' ``HAA``, Spot's ``hx``, a legged_gym quadruped's bare ``*_hip_joint``)."""

_SEP = r"[_.\-]"
LEG_FRONT_FIRST = re.compile(rf"^([FRHfrh])([LRlr])(?={_SEP}|$)")
"""``FL_`` / ``FR_`` / ``RL_`` / ``RR_`` (front / rear or hind, then left / right)."""
LEG_SIDE_FIRST = re.compile(rf"^([LRlr])([FHfh])(?={_SEP}|$)")
"""``LF_`` / ``RF_`` / ``LH_`` / ``RH_`` (left / right, then front / hind: ANYbotics)."""
WORD = re.compile(r"left|right|Left|Right|LEFT|RIGHT")
LETTER = re.compile(rf"(?:^|(?<={_SEP}))([LRlr])(?={_SEP}|$)")
"""A lone ``l`` / ``r`` / ``L`` / ``R`` between separators or at an end."""

_OTHER = {"L": "R", "R": "L", "l": "r", "r": "l", "left": "right", "right": "left", "Left": "Right",
          "Right": "Left", "LEFT": "RIGHT", "RIGHT": "LEFT"}


def _swap_group(rx: re.Pattern[str], group: int) -> Callable[[str], str]:
    def sub(name: str) -> str:
        m = rx.search(name)
        assert m is not None
        return name[:m.start(group)] + _OTHER[m.group(group)] + name[m.end(group):]
    return sub


CONVENTIONS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("leg, front/rear first", LEG_FRONT_FIRST, 2),
    ("leg, side first", LEG_SIDE_FIRST, 1),
    ("word", WORD, 0),
    ("letter", LETTER, 1),
)
"""(name, pattern, group holding the side) in the order they are tried."""


def convention_of(name: str) -> str | None:
    """The convention that gives ``name`` a side (None: no side)."""
    for label, rx, _ in CONVENTIONS:
        if rx.search(name):
            return label
    return None


def twin(name: str) -> str:
    """``left_knee_joint`` -> ``right_knee_joint``, ``FL_calf_joint`` -> ``FR_calf_joint``, ``LH_KFE`` ->
    ``RH_KFE``, ``l_hip`` -> ``r_hip`` (and back); a name without a side is its own twin. Without the other names
    a lone letter always counts as a side: ``twins`` decides it against the whole set."""
    for _, rx, group in CONVENTIONS:
        if rx.search(name):
            if rx is WORD:
                return WORD.sub(lambda m: _OTHER[m.group(0)], name)
            return _swap_group(rx, group)(name)
    return name


def side(name: str) -> str | None:
    """``left``, ``right`` or None, by the first convention that applies."""
    for _, rx, group in CONVENTIONS:
        m = rx.search(name)
        if m is not None:
            return "left" if m.group(group).lower() in ("l", "left") else "right"
    return None


def _declared_twin(mirror: MirrorMap, name: str) -> str:
    other = {a: b for a, b in mirror.swap} | {b: a for a, b in mirror.swap}
    if not other:
        return name
    rx = re.compile("|".join(re.escape(f) for f in sorted(other, key=len, reverse=True)))
    return rx.sub(lambda m: other[m.group(0)], name)


def _declared_side(mirror: MirrorMap, name: str) -> str | None:
    for a, b in mirror.swap:
        first, second = ("right", "left") if mirror.left == "second" else ("left", "right")
        if a in name:
            return first
        if b in name:
            return second
    return None


def twins(names: Sequence[str], mirror: MirrorMap | None = None) -> tuple[str, ...]:
    """The twin of each name, decided against the whole set: a lone-letter side whose twin is absent is no side.
    Names without a side are their own twins; a sided name whose twin is absent keeps the absent twin (see
    ``missing_twins``)."""
    present = set(names)
    out = []
    for n in names:
        if mirror is not None:
            out.append(_declared_twin(mirror, n))
            continue
        t = twin(n)
        if t not in present and convention_of(n) == "letter":
            t = n
        out.append(t)
    return tuple(out)


def sides(names: Sequence[str], mirror: MirrorMap | None = None) -> tuple[str | None, ...]:
    """``left`` / ``right`` / None for each name, consistent with ``twins``."""
    paired = twins(names, mirror)
    return tuple(None if t == n else (_declared_side(mirror, n) if mirror is not None else side(n))
                 for n, t in zip(names, paired, strict=True))


def missing_twins(names: Sequence[str], mirror: MirrorMap | None = None) -> list[str]:
    """Sided names whose twin is not among ``names``, and names that are not the twin of their twin."""
    paired = twins(names, mirror)
    index = {n: i for i, n in enumerate(names)}
    return [n for n, t in zip(names, paired, strict=True) if t not in index or paired[index[t]] != n]


def has_twins(names: Sequence[str], mirror: MirrorMap | None = None) -> bool:
    """Whether the names pair up: at least one has a side, and every sided one has its twin."""
    return any(t != n for n, t in zip(names, twins(names, mirror), strict=True)) and not missing_twins(names, mirror)


def flipped(name: str, mirror: MirrorMap | None = None) -> bool:
    """Whether the joint's angle changes sign under the mirror."""
    if mirror is not None:
        return bool(mirror.flipped) and re.search(mirror.flipped, name) is not None
    return FLIPPED.search(name) is not None


def check_declared(robot: str, mirror: MirrorMap, names: Sequence[str]) -> None:
    """One line when a declared map does not pair the actuated joints up (field ``mirror``)."""
    if mirror.left not in ("", "first", "second"):
        raise UserError(f"robot spec '{robot}' field mirror.left: {mirror.left!r} is not allowed; expected "
                        f"'first' or 'second'")
    try:
        re.compile(mirror.flipped)
    except re.error as e:
        raise UserError(f"robot spec '{robot}' field mirror.flipped: {mirror.flipped!r} is not a valid regex "
                        f"({e})") from None
    bad = missing_twins(names, mirror)
    if bad or not has_twins(names, mirror):
        problem = (f"no twin for joints {', '.join(bad)}" if bad
                   else "no joint name contains a fragment of mirror.swap")
        raise UserError(f"robot spec '{robot}' field mirror: {problem}; the actuated joints: {', '.join(names)}")
