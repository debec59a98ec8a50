"""Observation terms as one table: a task family lists its terms once, in order, as ``ObsTerm`` rows.

The rows are plain data (no torch), so deployment code reads the same table the trainer does. Everything else
about the observation is derived from it: the layout, the noise, the exported metadata and the mirror
(``envs/tasks/observations.py``), sim2sim's observation (``deploy/sim2sim.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MirrorRule = Literal["vector", "axial", "command", "joints", "none"]
"""How a term's values change under the left-right mirror: ``vector`` (x, -y, z), ``axial`` (-x, y, -z: an angular
velocity), ``command`` (vx, -vy, -yaw rate), ``joints`` (one value per joint: twins swapped, roll / yaw angles
negated), ``none`` (no mirror: a task with such a term offers no symmetry)."""


@dataclass(frozen=True)
class ObsTerm:
    """One observation term (a row of a task's table)."""

    name: str
    """The term's name: the key of its raw value, its name in the exported metadata (``obs_layout``)."""
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
    doc: str = ""
    """What the term is (units, frame)."""


def config_value(cfg: Any, path: str) -> float:
    """The config value at a dotted path (``"noise.lin_vel"`` -> ``cfg.noise.lin_vel``)."""
    value: Any = cfg
    for part in path.split("."):
        value = getattr(value, part)
    return float(value)
