"""The divergence test every task family shares: a world whose state or reward is not finite, that moves faster
than its family's bounds, or that the physics backend flags itself, has diverged (terminated, ``invalid``, its
reward zeroed, reset; the learner never learns from it and it never counts as a success)."""

from __future__ import annotations

import torch

from envs.physics.base import PhysicsReadout


def diverged(r: PhysicsReadout, reward: torch.Tensor, too_fast: torch.Tensor) -> torch.Tensor:
    """``[N]`` bool: a non-finite ``qpos`` / ``qvel`` or ``reward``, ``too_fast`` (the family's speed bounds) or the
    backend's own alarm (the observation's own check comes later, in the step)."""
    finite = torch.isfinite(r.qpos).all(1) & torch.isfinite(r.qvel).all(1)
    out = ~finite | too_fast
    out |= ~torch.isfinite(reward)
    if r.unstable is not None:
        out |= r.unstable.to(reward.device)
    return out

