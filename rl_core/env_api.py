"""The batched environment contract that every env satisfies (rsl_rl-compatible in spirit).

Observations are a dict of tensors ``[num_envs, dim]`` on ``env.device``: group ``"policy"`` always, group
``"critic"`` when the critic sees more than the actor (asymmetric actor-critic). Pixel envs give
``[num_envs, C, H, W]`` uint8 images instead and say so with ``obs_shapes`` and ``obs_dtype``. ``step`` returns
the done flags of the transition it just made, kept apart: ``terminated`` (a true terminal state, no bootstrap)
and ``truncated`` (a time limit, bootstrap from the value of ``info["final_obs"]``). Envs reset themselves
individually; the returned observation of a done env is already the first of its next episode.

This module is the whole contract the learning side reads: everything the runner, the evaluator and ``play.py``
read from an env is declared here (what play.py's video and viewer read of a MuJoCo task: ``apps/recorders.py``),
as ``VecEnv``, the typed ``StepInfo`` of ``step`` and the optional capabilities (``PixelObservations``,
``Checkpointable``, ``FiniteOutputs``, ``Exportable``, ``CommandBreakdown``, ``Symmetric``, ``MotionPrior``,
``NativeThreads``), which
callers test with ``isinstance`` (runtime-checkable Protocols) instead of probing for attributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, runtime_checkable

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


class StepInfo(TypedDict, total=False):
    """The ``info`` of ``VecEnv.step``: ``final_obs`` always, the rest where the env has it. Tensors are on the
    env's device and ``[num_envs]`` unless said otherwise; none needs a host sync to produce."""

    final_obs: Obs | None
    """Last observation before the reset, for the truncated envs (None when no env was truncated)."""
    log: dict[str, torch.Tensor]
    """Name -> scalar tensor, averaged by the runner over an iteration (``Env/<name>``)."""
    episode_stats: dict[str, torch.Tensor]
    """Name -> per-env value of the episodes that ended this step (NaN elsewhere), averaged over recent episodes."""
    invalid: torch.Tensor
    """bool: this transition is not to be learned from (diverged physics); the env already reset it."""
    metrics: dict[str, torch.Tensor]
    """Name -> per-step value per env, averaged by the evaluator over each episode's steps."""
    breakdown: dict[str, torch.Tensor]
    """Name -> per-env value (a command) by which the evaluator bins the metrics (with ``CommandBreakdown``)."""
    amp_obs: torch.Tensor
    """``[N, amp_obs_dim]``: the AMP observation of the state each env reached this step, before any reset (with
    ``MotionPrior``)."""


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

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        """Advance one control step.

        ``actions``: float ``[num_envs, n]`` (continuous) or long ``[num_envs]`` (discrete).
        Returns ``obs, rewards [N] float32, terminated [N] bool, truncated [N] bool, info`` (``StepInfo``).
        """
        ...

    def close(self) -> None: ...


@runtime_checkable
class PixelObservations(Protocol):
    """An env whose observations are not flat float vectors (images)."""

    obs_shapes: dict[str, tuple[int, ...]]
    """Shape of one env's observation per group, e.g. ``{"policy": (4, 84, 84)}``."""
    obs_dtype: torch.dtype
    """Element type of the observations (uint8 for pixels)."""


@runtime_checkable
class Headlined(Protocol):
    """An env that names its headline metrics: the console line shows them after the episode return."""

    headline_metrics: tuple[tuple[str, str], ...]
    """(name in ``StepInfo["log"]``, short label on the console line), e.g. ``(("reach_distance", "dist"),)``."""


@runtime_checkable
class Checkpointable(Protocol):
    """An env whose state goes into checkpoints (batched simulators), so a resumed run continues exactly."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


@runtime_checkable
class FiniteOutputs(Protocol):
    """An env whose observations (final ones included) and rewards are always finite: it replaces non-finite values
    itself and marks those transitions ``invalid``, so the learner does not check them again."""

    outputs_finite: bool
    """True: the guarantee holds."""


@runtime_checkable
class Exportable(Protocol):
    """An env that can describe itself to a deployment (stored in exported policies)."""

    def export_metadata(self) -> dict[str, Any]:
        """JSON-serializable facts a deployment needs (observation layout, action mapping, the scene, ...)."""
        ...


@runtime_checkable
class StackedObservations(Protocol):
    """An env whose policy observation is its last ``obs_frames`` frames, oldest first, each
    ``obs_dims["policy"] // obs_frames`` wide, with zeros for the frames before an episode's first (1: no
    history). An exported policy reads one frame and carries the past ones as its state (``rl_core/export.py``)."""

    obs_frames: int
    """Frames in the policy's observation."""


@runtime_checkable
class CommandBreakdown(Protocol):
    """An env whose metrics the evaluator also reports per command range (``info["breakdown"]``)."""

    breakdown_edges: dict[str, list[float]]
    """Name -> bin edges (``contract.breakdown``)."""


@runtime_checkable
class Symmetric(Protocol):
    """An env with a left-right mirror symmetry (``algorithm.symmetry``): signed permutations of every observation
    group it offers (``"policy"``, and ``"critic"`` when it has one) and of the action such that the mirrored
    observation of a state is the observation of the mirrored state, group by group, and the mirrored action acts
    on it as the action does on the original. All are involutions."""

    def mirror_obs(self, obs: torch.Tensor, group: str = "policy") -> torch.Tensor:
        """The mirror of raw (unnormalized) observations of ``group`` ``[..., obs_dims[group]]`` (history frames
        included)."""
        ...

    def mirror_actions(self, actions: torch.Tensor) -> torch.Tensor:
        """The mirror of actions ``[..., action_spec.n]``."""
        ...


@runtime_checkable
class NativeThreads(Protocol):
    """An env whose ``step`` runs native threads on the CPU cores the learner shares (a CPU physics backend's
    pool): the runner collects its rollout (policy inference, storage, the env's steps) with this many torch
    intra-op threads, so that no torch OpenMP worker spins on a core the physics needs (``rl_core/threads.py``);
    the update keeps ``runner.torch_threads``."""

    rollout_torch_threads: int
    """Torch threads during the rollout (0: no change)."""


@runtime_checkable
class MotionPrior(Protocol):
    """An env that offers adversarial motion priors (``algorithm.name=amp``): an AMP observation of its state (what
    a discriminator judges the style by: joints, base motion, feet...), and reference transitions of it from motion
    clips. Its steps report ``info["amp_obs"]``: the AMP observation each env reached, before any reset."""

    amp_obs_dim: int
    """Width of the AMP observation."""

    def amp_observation(self) -> torch.Tensor:
        """``[N, amp_obs_dim]``: the AMP observation of every env's current state (after resets)."""
        ...

    def amp_reference(self, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """``n`` reference transitions ``(s, s')``, each ``[n, amp_obs_dim]``, drawn with ``generator`` from the
        clips' consecutive control steps."""
        ...


def as_shape(x: int | tuple[int, ...]) -> tuple[int, ...]:
    """A width or a shape, as a shape."""
    return (x,) if isinstance(x, int) else tuple(x)


def obs_shape(env: VecEnv, group: str) -> tuple[int, ...] | None:
    """Shape of one env's observation of ``group`` (None: the env has no such group)."""
    if isinstance(env, PixelObservations) and group in env.obs_shapes:
        return tuple(env.obs_shapes[group])
    return (env.obs_dims[group],) if group in env.obs_dims else None


def obs_dtype(env: VecEnv) -> torch.dtype:
    """Element type of the observations: float32, or uint8 for pixels."""
    return env.obs_dtype if isinstance(env, PixelObservations) else torch.float32


def state_dict_of(env: VecEnv) -> dict[str, Any] | None:
    """The env's own checkpointable state, if it offers one (batched simulators do; Gymnasium envs do not)."""
    return env.state_dict() if isinstance(env, Checkpointable) else None
