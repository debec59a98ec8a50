"""The per-env state of the reaching task, declared once (``envs/tasks/state.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.state import TaskState, per_env


@dataclass(eq=False)
class ReachState(TaskState):
    """Every field is saved in checkpoints under its name; the order is the checkpoint's and the graph's."""

    target: torch.Tensor = per_env(3, reset="task")
    """Where the fingertip should go (m, world frame); drawn at resets and every ``targets.resample_s``."""
    episode_length: torch.Tensor = per_env(dtype=torch.long)
    """Control steps since the episode began."""
    last_actions: torch.Tensor = per_env("joints")
    """The previous step's clipped actions."""
