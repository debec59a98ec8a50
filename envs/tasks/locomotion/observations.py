"""What the velocity-tracking task's observation terms read (``obs_table.py`` declares each term whole).

``Inputs`` is what a term's value reads of a step (the step's view ``s``, the task state of the observed envs, the
sources resolved once), ``BoundInputs`` what its bound is derived from (the speed bounds, the config, the robot).
The layout, values, noise, bounds, the exported ``obs_layout`` / ``obs_scales``, the mirror and sim2sim's
observation all derive from ``obs_table.TABLE`` (``envs/tasks/observations.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from envs.robots.resolved import ResolvedRobot
from envs.tasks.bounds import SpeedBounds
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.obs_table import OBS_SCALES, TABLE, TERM_NAMES
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.locomotion.step import Step
from envs.terrain.ground import Ground

__all__ = ["OBS_SCALES", "TABLE", "TERM_NAMES", "BoundInputs", "Inputs", "Sources"]


@dataclass(frozen=True)
class Sources:
    """What the terms read besides the step and the task state (resolved once, with the env)."""

    default_joint_pos: torch.Tensor
    """The standing pose ``[J]`` (``joint_pos`` is observed relative to it)."""
    ground: Ground
    """The ground under the robots (the height scan)."""
    cfg: LocomotionEnvConfig
    """The task's config (``height_scan``)."""


@dataclass(frozen=True)
class Inputs:
    """What a term's value reads for the envs of a step's view."""

    s: Step
    """The step's view (the observed envs)."""
    state: LocomotionState
    """The task state of all envs (``own`` selects the observed ones)."""
    src: Sources
    """What the terms read besides."""
    rows: torch.Tensor | None
    """The observed envs' rows of all envs (None: all)."""

    def own(self, x: torch.Tensor) -> torch.Tensor:
        """The observed envs' rows of a task state tensor."""
        return x if self.rows is None else x[self.rows]

    def height_scan(self) -> torch.Tensor:
        """Base height over the ground at each scan point, minus the offset, clipped (m)."""
        s, scan = self.s, self.src.cfg.height_scan
        heights = self.src.ground.scan(s.r.qpos[:, s.adr.base_pos], s.yaw) - scan.offset
        return heights.clamp(-scan.clip, scan.clip)


@dataclass(frozen=True)
class BoundInputs:
    """What the bounds of the terms are derived from."""

    speed: SpeedBounds
    cfg: LocomotionEnvConfig
    robot: ResolvedRobot

    def joint_ranges(self) -> list[float]:
        """Per joint: the farthest a limited joint can be from its default angle, + 1 rad (soft limits give)."""
        out = []
        for (lo, hi), default in zip(self.robot.joint_range, self.robot.default_joint_pos, strict=True):
            limited = lo is not None and hi is not None and lo < hi
            out.append(max(abs(lo - default), abs(hi - default)) + 1.0 if limited  # type: ignore[operator]
                       else math.inf)
        return out

    def command_ranges(self) -> list[float]:
        """The largest commanded magnitude of vx, vy (m/s) and the yaw rate (rad/s)."""
        c = self.cfg.commands
        return [max(abs(v) for v in c.lin_vel_x), max(abs(v) for v in c.lin_vel_y), max(abs(v) for v in c.yaw_rate)]
