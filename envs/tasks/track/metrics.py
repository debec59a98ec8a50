"""What a tracking step reports: the tracking errors (logged and averaged by the evaluator), each ended episode's
``clip_end``, the start sampler's entropy (a ``parts.Report``)."""

from __future__ import annotations

import math
from typing import Any

import torch

from envs.tasks.parts import Report
from envs.tasks.track.library import MotionLibrary
from envs.tasks.track.sampling import StartSampler
from envs.tasks.track.state import TrackState
from envs.tasks.track.step import Measured


def errors(q: Measured) -> dict[str, torch.Tensor]:
    """Joint-angle (rad), anchor-position (m), anchor-orientation (rad) and body-position (m) errors."""
    e = q.e
    return {"joint_pos_error": e.joint_pos_abs, "anchor_pos_error": e.anchor_dist,
            "anchor_ori_error": e.anchor_angle, "body_pos_error": e.body_dist}


def report(state: TrackState, library: MotionLibrary, sampler: StartSampler) -> Report[Measured]:
    """The report of envs at ``state``'s frames of ``library``'s clips, started by ``sampler``."""

    def episode_stats(q: Measured, ended: torch.Tensor) -> dict[str, torch.Tensor]:
        """``clip_end``: the episode reached its clip's last frame."""
        end = (state.frame >= library.env_last).float()
        return {"clip_end": torch.where(ended, end, torch.full_like(end, math.nan))}

    def info(q: Measured) -> dict[str, Any]:
        return {"log": {"start_entropy": sampler.entropy()}}

    return Report(measures=errors, metrics=errors, episode_stats=episode_stats, info=info)
