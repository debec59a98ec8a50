"""Task families declare themselves: a module of ``deploy/`` or ``apps/`` that plays a family's exported files
holds ``FAMILY = Family(...)`` (its name, its meaning, its own metadata keys, the shared keys it carries), and
``discover`` finds every declaration by reading those modules' source as data, without importing them: the
contract imports nothing above it, and reading a dozen small files costs milliseconds, not MuJoCo's import.

A declaration is plain data (string, number and bool literals, tuples and lists, ``Key(...)`` and ``Family(...)``
calls; adjacent strings and ``+`` between them), so it reads the same imported or parsed. The declaring module is
the family's sim2sim module (``run(policy, episodes, seed)`` and ``RUNTIME``; ``apps/sim2sim.py``).
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
"""The checkout (or installed tree) whose ``deploy/`` and ``apps/`` hold the declarations."""
SEARCHED = ("deploy", "apps")
"""The packages whose top-level modules may declare a family, in this order (each by file name)."""
MARK = "\nFAMILY = "
"""How a declaring module's source spells its declaration (a module-level assignment)."""


@dataclass(frozen=True)
class Key:
    """One metadata entry."""

    name: str
    """The key in ``metadata_props``."""
    type: str
    """JSON type: str, int, number, bool, list[str], list[int], list[number], object, or a ``|`` union with null."""
    unit: str
    """Physical unit ('' when none)."""
    meaning: str
    """What it is, its frame and the order of its entries."""
    family: str = ""
    """Which exports carry it: ``all``; '' for a shared key (the families whose ``carries`` name it); a family's
    own key (``Family.keys``) gets that family's name on discovery."""
    optional: str = ""
    """Empty: always present; otherwise when it is present."""


@dataclass(frozen=True)
class Family:
    """One task family an export may name (``task_family``)."""

    name: str
    """The ``task_family`` value its exports write."""
    meaning: str
    """What its policies do, in words."""
    keys: tuple[Key, ...] = ()
    """Metadata keys only this family writes, in the order docs/deploy.md lists them."""
    carries: tuple[str, ...] = ()
    """Names of the shared keys (``contract.schema.KEYS``) its exports write too."""
    sim2sim: str = ""
    """The declaring module (set by ``discover``): its ``run(policy, episodes, seed)`` plays a file of the family in
    its own simulator and returns play.py's metrics (``play.py --sim2sim``), its ``RUNTIME`` names that simulator."""


def discover(root: Path = ROOT) -> dict[str, Family]:
    """Every declared family by name: ``deploy/*.py`` by file name, then ``apps/*.py``; each declaration's module
    filled in and its own keys named after it. A name declared twice is an error naming both modules."""
    out: dict[str, Family] = {}
    for package in SEARCHED:
        for path in sorted((root / package).glob("*.py")):
            text = path.read_text()
            if MARK not in text:
                continue
            fam = declared(text, str(path))
            module = f"{package}.{path.stem}"
            if fam.name in out:
                raise ValueError(f"task family {fam.name!r} is declared by {out[fam.name].sim2sim} and {module}")
            keys = tuple(dataclasses.replace(k, family=fam.name) for k in fam.keys)
            out[fam.name] = dataclasses.replace(fam, keys=keys, sim2sim=module)
    return out


def declared(source: str, where: str) -> Family:
    """The ``FAMILY = Family(...)`` of a module's source, evaluated as plain data."""
    for node in ast.parse(source, where).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["FAMILY"]:
            value = _data(node.value, where)
            if not isinstance(value, Family):
                raise ValueError(f"{where}:{node.lineno}: FAMILY must be a Family(...)")
            return value
    raise ValueError(f"{where}: no module-level FAMILY = Family(...)")


_CALLS: dict[str, Any] = {"Family": Family, "Key": Key}


def _data(node: ast.expr, where: str) -> Any:
    """A literal, a tuple or list of them, ``+`` of two, or a ``Family`` / ``Key`` call on them."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_data(e, where) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _data(node.left, where) + _data(node.right, where)
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in _CALLS:
            kwargs = {k.arg: _data(k.value, where) for k in node.keywords if k.arg}
            return _CALLS[name](*(_data(a, where) for a in node.args), **kwargs)
    raise ValueError(f"{where}:{node.lineno}: a FAMILY declaration is plain data (literals, tuples, Key(...), "
                     f"Family(...)); found {ast.dump(node)[:60]}")
