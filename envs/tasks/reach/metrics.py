"""What a reaching step reports: the distance (logged and averaged by the evaluator), and each ended episode's
success and final distance (a ``parts.Report``)."""

from __future__ import annotations

import torch

from envs.tasks.parts import Report
from envs.tasks.reach.step import Measured


def distance(q: Measured) -> dict[str, torch.Tensor]:
    """The fingertip's distance to its target (m)."""
    return {"distance": q.distance}


def report(success_radius: float) -> Report[Measured]:
    """The report with episodes counted a success within ``success_radius`` (m)."""

    def episode_stats(q: Measured, ended: torch.Tensor) -> dict[str, torch.Tensor]:
        """``success`` (the fingertip ended within ``success_radius``) and ``final_distance`` of the episodes that
        ended; a diverged episode has no final distance and is never a success."""
        nan = torch.full_like(q.distance, float("nan"))
        return {"success": torch.where(ended, (q.distance <= success_radius).float(), nan),
                "final_distance": torch.where(ended, q.distance, nan)}

    return Report(measures=distance, metrics=distance, episode_stats=episode_stats)
