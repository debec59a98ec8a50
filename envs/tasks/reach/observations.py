"""The reaching task's observation, as one table (``envs/tasks/observations.py``).

``TABLE`` lists the terms in order; ``values`` gives each term's raw value. The layout, the noise vector and the
exported ``obs_layout`` / ``obs_scales`` derive from ``TABLE``; sim2sim (``deploy/sim2sim_reach.py``) rebuilds
each term by its exported name. Positions are in the frame of the arm's fixed base body.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.tasks.obs_table import ObsTerm, declared

TABLE = declared((
    ObsTerm("joint_pos", "joints", 1.0, "noise.joint_pos"),
    ObsTerm("joint_vel", "joints", 0.1, "noise.joint_vel"),
    ObsTerm("target_pos", 3, 2.0, "noise.target"),
    ObsTerm("to_target", 3, 5.0, "noise.target"),
    ObsTerm("last_actions", "joints", 1.0),
))
"""The policy's observation terms in order."""
TERM_NAMES = tuple(t.name for t in TABLE)


@dataclass(frozen=True)
class Frame:
    """The base's frame: world positions are observed as ``rot^T (x - origin)``."""

    origin: torch.Tensor
    """Base body position ``[3]`` (world, m)."""
    rot: torch.Tensor
    """Base body orientation ``[3, 3]`` (base to world)."""

    def of(self, x: torch.Tensor) -> torch.Tensor:
        """World points ``[N, 3]`` in the base frame."""
        return (x - self.origin) @ self.rot

    def vector(self, v: torch.Tensor) -> torch.Tensor:
        """World vectors ``[N, 3]`` in the base frame."""
        return v @ self.rot


def values(joint_pos: torch.Tensor, joint_vel: torch.Tensor, default: torch.Tensor, target: torch.Tensor,
           tip: torch.Tensor, last_actions: torch.Tensor, frame: Frame) -> dict[str, torch.Tensor]:
    """Each term's raw value (``[N, size]``; world positions ``target`` and fingertip ``tip``)."""
    return {"joint_pos": joint_pos - default, "joint_vel": joint_vel, "target_pos": frame.of(target),
            "to_target": frame.vector(target - tip), "last_actions": last_actions}
