"""What a velocity-tracking step reports beyond the shared log (``envs/tasks/base.py``: step_log): the per-step metrics
the evaluator averages and the commands it bins them by."""

from __future__ import annotations

import torch

from envs.tasks.locomotion.commands import COMMANDS


def per_step(lin_err: torch.Tensor, yaw_err: torch.Tensor, contact: torch.Tensor, foot_names: tuple[str, ...],
             side_feet: tuple[torch.Tensor, torch.Tensor] | None) -> dict[str, torch.Tensor]:
    """The evaluator's metrics: tracking errors; per foot 1 while it is off the ground (its evaluated mean is the
    foot's swing fraction); ``duty_factor_difference``: left minus right foot on the ground, averaged over the
    side pairs (its evaluated mean is the difference of the duty factors; 0 for a symmetric gait)."""
    swing = (~contact).float().unbind(1)
    out = {"lin_vel_tracking_error": lin_err, "yaw_rate_tracking_error": yaw_err,
           **{f"swing_{name}": x for name, x in zip(foot_names, swing, strict=True)}}
    if side_feet is not None:
        left, right = side_feet
        on = contact.float()
        out["duty_factor_difference"] = (on.index_select(1, left) - on.index_select(1, right)).mean(1)
    return out


def breakdown(commands: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each command component by name (the evaluator bins the metrics by them)."""
    return {name: commands[:, j] for j, name in enumerate(COMMANDS)}
