"""The per-env state of the motion-tracking task, declared once (``envs/tasks/state.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.state import TaskState, per_env


@dataclass(eq=False)
class TrackState(TaskState):
    """Every field is saved in checkpoints under its name; the order is the checkpoint's and the graph's."""

    frame: torch.Tensor = per_env(dtype=torch.long, reset="task")
    """The frame of the env's clip the robot should be at now (drawn at a reset, one further each step)."""
    episode_length: torch.Tensor = per_env(dtype=torch.long)
    """Control steps since the episode began."""
    last_actions: torch.Tensor = per_env("joints")
    """The previous step's clipped actions."""
