"""Observation terms as one table: a task family lists the terms it observes once, in order, as ``ObsTerm`` rows.

Each row names a term declared in the contract (``contract/terms.py``: unit, meaning, what supplies it on a
robot, its value from a robot's reading) and adds how this family trains with it: width, scale, noise, clip and
mirror rule. Everything else about the observation is derived from the table: the layout, the noise, the
exported metadata and the mirror (``envs/tasks/observations.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.terms import TERMS, MirrorRule

__all__ = ["MirrorRule", "ObsTerm", "config_value", "declared"]


@dataclass(frozen=True)
class ObsTerm:
    """One observation term (a row of a task's table)."""

    name: str
    """A term of ``contract.terms.TERMS``: the key of its raw value, its name in the exported metadata
    (``obs_layout``)."""
    size: int | str
    """Width: a number, or the name of a size the task resolves (e.g. ``"joints"``; 0 leaves the term out)."""
    scale: float | tuple[float, ...] = 1.0
    """The raw value is multiplied by this (one number, or one per column)."""
    noise: str = ""
    """Dotted path of the noise level in the env config (physical units, e.g. ``"noise.joint_vel"``); empty: none."""
    clip: str = ""
    """Dotted path of a clip in the env config (physical units): the noisy value stays within +-clip x scale."""
    mirror: MirrorRule = "none"
    """How the values change under the left-right mirror."""


def declared(table: tuple[ObsTerm, ...]) -> tuple[ObsTerm, ...]:
    """A family's table, every row naming a term of the contract (``contract/terms.py``; else a ValueError at
    import: deployment would not know the term)."""
    missing = [t.name for t in table if t.name not in TERMS]
    if missing:
        raise ValueError(f"observation term(s) {', '.join(missing)} are not declared in contract/terms.py")
    return table


def config_value(cfg: Any, path: str) -> float:
    """The config value at a dotted path (``"noise.lin_vel"`` -> ``cfg.noise.lin_vel``)."""
    value: Any = cfg
    for part in path.split("."):
        value = getattr(value, part)
    return float(value)
