"""Observation terms as one table: a task family lists the terms it observes once, in order, as ``ObsTerm`` rows.

Each row names a term declared in the contract (``contract/terms.py``: unit, meaning, what supplies it on a
robot, its value from a robot's reading) and declares everything the family trains with: its torch value from the
family's observation inputs, its width, scale, bound (physical units), noise and clip (typed references into the
family's config) and mirror rule. Everything else about the observation is derived from the table: the layout, the
values, the noise, the bounds, the exported metadata and the mirror (``envs/tasks/observations.py``).

A row is plain data: this module imports no torch (sim2sim and the config read a family's table without it);
the functions of a row only run in the trainer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from contract.terms import TERMS, MirrorRule

__all__ = ["MirrorRule", "ObsTerm", "declared"]

X = TypeVar("X")
"""A family's observation inputs (what a term's value reads: a step's view, the task state, ...)."""
B = TypeVar("B")
"""What a family's bounds are derived from (speed bounds, the config, the robot)."""
C = TypeVar("C")
"""A family's env config."""


@dataclass(frozen=True)
class ObsTerm(Generic[X, B, C]):
    """One observation term (a row of a task's table)."""

    name: str
    """A term of ``contract.terms.TERMS``: its name in the exported metadata (``obs_layout``)."""
    size: int | str
    """Width: a number, or the name of a size the task resolves (e.g. ``"joints"``; 0 leaves the term out)."""
    scale: float | tuple[float, ...] = 1.0
    """The raw value is multiplied by this (one number, or one per column)."""
    value: Callable[[X], Any] | None = None
    """The raw value ``[n, size]`` (physical units, a torch tensor) from the family's observation inputs; None: the
    family's table is refused at import."""
    bound: Callable[[B, int], list[float]] | None = None
    """Per column (given the width), the largest magnitude of the noise-free raw value in a world within the robot's
    speed bounds, in physical units (the layout multiplies the scale in); None: the family's limit applies."""
    noise: Callable[[C], float] | None = None
    """The noise level in the env config (physical units, e.g. ``lambda c: c.noise.lin_vel``); None: none."""
    clip: Callable[[C], float] | None = None
    """A clip in the env config (physical units): the noisy value stays within +-clip x scale; None: none."""
    mirror: MirrorRule = "none"
    """How the values change under the left-right mirror."""


def declared(table: tuple[ObsTerm[X, B, C], ...], bounded: bool = False) -> tuple[ObsTerm[X, B, C], ...]:
    """A family's table, every row naming a term of the contract (``contract/terms.py``; else deployment would not
    know the term) and having a value (and with ``bounded`` a bound); else a ValueError at import."""
    missing = [t.name for t in table if t.name not in TERMS]
    if missing:
        raise ValueError(f"observation term(s) {', '.join(missing)} are not declared in contract/terms.py")
    no_value = [t.name for t in table if t.value is None]
    if no_value:
        raise ValueError(f"observation terms without a value: {', '.join(no_value)}")
    no_bound = [t.name for t in table if bounded and t.bound is None]
    if no_bound:
        raise ValueError(f"observation terms without a bound: {', '.join(no_bound)}")
    return table
