"""A hand-built reward ``Context`` for the reward-term tests: only the quantities a term reads need to be given."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

STATE = ("commands", "last_actions", "last_joint_vel", "air_time", "contact_time", "last_contacts")
"""Quantities a term reads from the task state (``x.state.<name>``)."""
STEP = ("lin_vel_b", "ang_vel_b", "gravity_b", "torques", "joint_torques", "joint_vel", "foot_vel_w", "foot_pos_w",
        "base_quat")
"""Quantities a term reads from the step (``x.s.<name>``)."""


def context(**values: Any) -> Any:
    """A namespace with ``values`` where a reward term looks for them (``x.s.<name>``, ``x.state.<name>``,
    ``x.<name>``); a nested namespace (e.g. ``params``) is given as is."""
    state = {k: v for k, v in values.items() if k in STATE}
    step = {k: v for k, v in values.items() if k in STEP}
    rest = {k: v for k, v in values.items() if k not in STATE and k not in STEP}
    return SimpleNamespace(state=SimpleNamespace(**state), s=SimpleNamespace(**step), **rest)
