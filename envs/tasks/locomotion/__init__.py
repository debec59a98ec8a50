"""Velocity tracking for legged robots (legged_gym's task): ``LocomotionEnv`` and its jobs (``env.py`` lists them).

The names below load on first use, so torch-free modules of this package (``obs_table.py``, read by sim2sim and
the config) import without the env.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envs.tasks.locomotion.env import LocomotionEnv
    from envs.tasks.locomotion.obs_table import OBS_SCALES
    from envs.tasks.locomotion.randomization import RANDOMIZED_FIELDS
    from envs.tasks.locomotion.state import PRIVILEGED_TERMS
    from envs.tasks.locomotion.terminations import MAX_SANE_QVEL

_WHERE = {"LocomotionEnv": "env", "OBS_SCALES": "obs_table", "RANDOMIZED_FIELDS": "randomization",
          "PRIVILEGED_TERMS": "state", "MAX_SANE_QVEL": "terminations"}
__all__ = ["LocomotionEnv", "MAX_SANE_QVEL", "OBS_SCALES", "PRIVILEGED_TERMS", "RANDOMIZED_FIELDS"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
