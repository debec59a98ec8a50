"""What a step reports: the iteration log (means over the worlds that did not diverge), the per-step metrics
the evaluator averages, and the episode statistics."""

from __future__ import annotations

import torch

from envs.tasks.locomotion.commands import COMMANDS


def log(terms: torch.Tensor, names: list[str], valid: torch.Tensor, lin_err: torch.Tensor, yaw_err: torch.Tensor,
        terminated: torch.Tensor, truncated: torch.Tensor, diverged: torch.Tensor) -> dict[str, torch.Tensor]:
    """``Env/<name>`` of one step: each reward term's mean (``terms [T, N]``, weighted), the tracking errors and
    the done shares over the valid worlds (a diverged world's terms can be huge or NaN), the diverged share."""
    w = valid.float()
    n = w.sum().clamp(min=1.0)
    means = torch.where(valid, terms, 0.0).sum(1) / n  # one reduction, not one per term
    out = dict(zip((f"rew_{name}" for name in names), means.unbind(), strict=True))
    stacked = torch.stack([lin_err, yaw_err, terminated.float(), truncated.float()])
    errors = torch.where(valid, stacked, 0.0).sum(1) / n
    out.update(lin_vel_error=errors[0], yaw_rate_error=errors[1], terminated=errors[2], truncated=errors[3],
               diverged=diverged.float().mean())
    return out


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
