"""What a velocity-tracking step reports beyond the shared log (``envs/tasks/base.py``: step_log): the per-step metrics
the evaluator averages and the commands it bins them by."""

from __future__ import annotations

import math
from typing import Any

import torch

from envs.tasks.locomotion.amp import AmpObservation
from envs.tasks.locomotion.commands import COMMANDS
from envs.tasks.locomotion.measure import Measured
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.parts import Report
from envs.terrain.ground import Ground

WRITES = ("max_travelled",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


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


def errors(q: Measured) -> dict[str, torch.Tensor]:
    """The step's velocity tracking errors (m/s, rad/s), logged as means."""
    return {"lin_vel_error": q.lin_err, "yaw_rate_error": q.yaw_err}


class Reports:
    """What a step reports of robots with feet ``foot_names`` (``side_feet``: left and right twins' columns) on
    ``ground`` (``terrain``: a generated terrain's levels are logged), with the ``amp`` observation (None: none)."""

    def __init__(self, state: LocomotionState, ground: Ground, success_distance: float, foot_names: tuple[str, ...],
                 side_feet: tuple[torch.Tensor, torch.Tensor] | None, terrain: bool, amp: AmpObservation | None):
        self.state, self.ground, self.success_distance = state, ground, success_distance
        self.foot_names, self.side_feet, self.terrain, self.amp = foot_names, side_feet, terrain, amp

    def metrics(self, q: Measured) -> dict[str, torch.Tensor]:
        return per_step(q.lin_err, q.yaw_err, q.context.contact, self.foot_names, self.side_feet)

    def episode_stats(self, q: Measured, ended: torch.Tensor) -> dict[str, torch.Tensor]:
        """``success``: the episode's robot walked ``success_distance`` from its start."""
        state = self.state
        state.max_travelled = torch.maximum(state.max_travelled, self.ground.travelled(q.s.base_xy))
        success = (state.max_travelled >= self.success_distance).float()
        return {"success": torch.where(ended, success, torch.full_like(success, math.nan))}

    def info(self, q: Measured) -> dict[str, Any]:
        """The commands by name (``breakdown``), the mean terrain level, the AMP observation."""
        out: dict[str, Any] = {"breakdown": breakdown(q.commands)}
        if self.terrain:
            out["log"] = {"terrain_level": self.ground.mean_level()}
        if self.amp is not None:
            out["amp_obs"] = self.amp(q.s.r.qpos, q.s.r.qvel)
        return out

    def report(self) -> Report[Measured]:
        return Report(measures=errors, metrics=self.metrics, episode_stats=self.episode_stats, info=self.info)
