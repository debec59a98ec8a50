"""The per-env state of the velocity-tracking task, declared once (``envs/tasks/state.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.state import TaskState, per_env

PRIVILEGED_TERMS = ("friction", "added_base_mass", "gain_scale")
"""What the privileged critic sees beyond the policy's (noise-free) terms, in order."""


@dataclass(eq=False)
class LocomotionState(TaskState):
    """Every field is saved in checkpoints under its name; the order is the checkpoint's and the graph's. The env
    appends the fields its stateful reward terms own (``rewards.FootClocks``: ``TaskState.merged``)."""

    commands: torch.Tensor = per_env(3, reset="task")
    """Velocity commands (vx, vy m/s in the base frame, yaw rate rad/s); drawn at resets and resamples."""
    episode_length: torch.Tensor = per_env(dtype=torch.long)
    """Control steps since the episode began."""
    last_actions: torch.Tensor = per_env("joints")
    """The previous step's clipped actions."""
    last_joint_vel: torch.Tensor = per_env("joints", reset="zero_finite")
    """The previous step's joint velocities (rad/s)."""
    max_travelled: torch.Tensor = per_env(reset="zero_finite")
    """Farthest distance (m) of the base from its start this episode (success: ``env.success_distance``)."""
    privileged: torch.Tensor = per_env(len(PRIVILEGED_TERMS), reset="task")
    """This episode's randomized friction, added base mass and gain factor (the privileged critic's inputs)."""
    heading: torch.Tensor = per_env(reset="task")
    """Heading command (rad, ``commands.heading``); drawn with the commands."""
    action_delay: torch.Tensor = per_env(dtype=torch.long, reset="task")
    """This episode's action latency (control steps, ``randomization.action_delay``; 0 when off)."""
    past_frames: torch.Tensor = per_env("history")
    """The policy's previous ``env.obs_history - 1`` observations, oldest first (``envs/tasks/history.py``);
    zeros after a reset."""
    action_queue: torch.Tensor = per_env("delay", "joints")
    """The policy's last actions, newest first, as many as the longest delay (``latency.py``); zeros after a reset."""
