"""The batched environment contract that every env satisfies (rsl_rl-compatible in spirit).

Observations are a dict of tensors ``[num_envs, dim]`` on ``env.device``: group ``"policy"`` always, group
``"critic"`` when the critic sees more than the actor (asymmetric actor-critic). Pixel envs give
``[num_envs, C, H, W]`` uint8 images instead and say so with ``obs_shapes`` and ``obs_dtype`` (optional
attributes; vector envs leave them out). ``step`` returns the done
flags of the transition it just made, kept apart: ``terminated`` (a true terminal state, no bootstrap) and
``truncated`` (a time limit, bootstrap from the value of ``info["final_obs"]``). Envs reset themselves
individually; the returned observation of a done env is already the first of its next episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch

Obs = dict[str, torch.Tensor]


@dataclass(frozen=True)
class ActionSpec:
    """What the policy must output."""

    discrete: bool
    """True: one integer in [0, n) per env; False: a float vector per env."""
    n: int
    """Number of discrete actions, or the width of the continuous action vector."""
    low: tuple[float, ...] | None = None
    """Lower bounds of continuous actions (actions are clipped to them by the env), or None."""
    high: tuple[float, ...] | None = None
    """Upper bounds of continuous actions, or None."""


@runtime_checkable
class VecEnv(Protocol):
    num_envs: int
    """Number of environments stepped together."""
    obs_dims: dict[str, int]
    """Width of each observation group ('policy' and optionally 'critic')."""
    action_spec: ActionSpec
    """Action space of one env."""
    device: torch.device
    """Where observations, rewards and flags live."""

    def reset(self, seed: int | None = None) -> Obs:
        """Reset every env (only at the start of a run or a resume) and return the first observations."""
        ...

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Advance one control step.

        ``actions``: float ``[num_envs, n]`` (continuous) or long ``[num_envs]`` (discrete).
        Returns ``obs, rewards [N] float32, terminated [N] bool, truncated [N] bool, info`` where
        ``info["final_obs"]`` (an Obs, or None when no env was truncated) holds the last observation before
        the reset for truncated envs, and ``info["log"]`` (optional) maps names to on-device scalar tensors
        that the runner averages per iteration.
        """
        ...

    def close(self) -> None: ...


def as_shape(x: int | tuple[int, ...]) -> tuple[int, ...]:
    """A width or a shape, as a shape."""
    return (x,) if isinstance(x, int) else tuple(x)


def obs_shape(env: VecEnv, group: str) -> tuple[int, ...] | None:
    """Shape of one env's observation of ``group`` (None: the env has no such group)."""
    shapes = getattr(env, "obs_shapes", None)
    if shapes is not None and group in shapes:
        return tuple(shapes[group])
    return (env.obs_dims[group],) if group in env.obs_dims else None


def obs_dtype(env: VecEnv) -> torch.dtype:
    """Element type of the observations: float32, or uint8 for pixels."""
    return getattr(env, "obs_dtype", torch.float32)


def state_dict_of(env: VecEnv) -> dict[str, Any] | None:
    """The env's own checkpointable state, if it offers one (batched simulators do; Gymnasium envs do not)."""
    fn = getattr(env, "state_dict", None)
    return fn() if callable(fn) else None
