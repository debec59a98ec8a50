"""The parts a task family assembles for ``MujocoTask``'s step recipe, typed by the family's data.

A family's ``__init__`` builds one ``TaskParts[V, Q]`` from objects and functions of its job modules (commands,
terminations, observations, metrics, randomization, ...); the recipe (``envs/tasks/base.py``) calls them in its
fixed order. ``V`` is the family's view of a physics readout (its named quantities), ``Q`` the quantities of one
step that the later parts read: mypy checks that a family's parts agree on both. A part gets the objects it needs
(the task state, the generator, the ground, the config) when it is built, never the env.

    readout -> view -> measure -> reward terms (reward_context) -> divergence (too_fast) and terminations
    -> events.after_step -> resample -> observe -> report.episode_stats -> events.before_reset
    -> [events.episode_end, events.reset, observe the fresh envs] -> events.after_observation -> report
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

import torch

from envs.physics.base import PhysicsReadout
from rl_core.env_api import Obs

V = TypeVar("V")
"""A family's view of a readout (its named quantities; the readout itself for a simple family)."""
Q = TypeVar("Q")
"""A family's quantities of one step (what the parts after ``measure`` read)."""
V_in = TypeVar("V_in", contravariant=True)

Mask = torch.Tensor
"""``[N]`` bool: the envs a part acts on."""
Named = dict[str, torch.Tensor]
"""Per-env values by name."""


class Observe(Protocol[V_in]):
    """The observation of a view, as ``MujocoTask`` asks for it."""

    def __call__(self, v: V_in, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        """The observation of ``v`` (finite) and, with ``check``, ``[N]`` bool: it was not finite or beyond its
        bounds (None without: a reset env's first observation is not checked). ``rows``: ``v`` holds these envs
        only (the noise is still drawn for all envs)."""
        ...


@dataclass(frozen=True)
class Termination(Generic[Q]):
    """One way an episode ends besides divergence and the time limit."""

    name: str
    """What it is called (e.g. ``fell``)."""
    kind: Literal["fail", "cut"]
    """``fail``: terminated (not bootstrapped); ``cut``: cut short, bootstrapped like the time limit."""
    fn: Callable[[Q], torch.Tensor]
    """``[N]`` bool of the step's quantities: the episode ends this way."""


@dataclass(frozen=True)
class Events(Generic[Q]):
    """What acts on the task state around the step's resets."""

    reset: Callable[[Mask], None]
    """Fresh state for the masked envs (fixed shapes, no sync); ``MujocoTask.reset_envs`` calls it."""
    after_step: Callable[[Q, torch.Tensor], None]
    """The task state a step leaves (last actions, ...) once rewards and terminations are known; gets the clipped
    actions."""
    start_all: Callable[[], None] | None = None
    """Before every env is reset at once (e.g. a curriculum's first levels)."""
    before_reset: Callable[[Q, Mask], None] | None = None
    """On the envs that go on (the mask: the done ones), before the resets (e.g. pushes)."""
    episode_end: Callable[[Q, Mask], None] | None = None
    """What the episodes that ended validly (the mask) leave behind (e.g. a terrain curriculum)."""
    after_observation: Callable[[Obs], None] | None = None
    """What the observation the policy gets next leaves in the task state (e.g. an observation history)."""


@dataclass(frozen=True)
class Report(Generic[Q]):
    """What a step tells besides observation, reward and dones."""

    measures: Callable[[Q], Named]
    """Per-env measures of the step, logged as means (``Env/<name>``)."""
    metrics: Callable[[Q], Named]
    """``info["metrics"]``: per-env values the evaluator averages over each episode."""
    episode_stats: Callable[[Q, Mask], Named] | None = None
    """``info["episode_stats"]`` of the episodes that ended validly (the mask), NaN elsewhere."""
    info: Callable[[Q], dict[str, Any]] | None = None
    """Other ``info`` entries (e.g. ``breakdown``) and ``log`` additions (``log``)."""


@dataclass(frozen=True)
class TaskParts(Generic[V, Q]):
    """Everything of a family that one step runs (the module docstring gives the order)."""

    view: Callable[[PhysicsReadout], V]
    """The family's named quantities of a readout (observations, rewards and terminations read them)."""
    measure: Callable[[V, torch.Tensor], Q]
    """After the physics: the step's quantities (gets the clipped actions), and the clocks it keeps advanced."""
    reward_context: Callable[[Q, torch.Tensor], Any]
    """What the reward terms read (``reward_terms.RewardTerms``)."""
    too_fast: Callable[[torch.Tensor], torch.Tensor]
    """``[N]`` bool of ``qvel``: a world moves faster than the family's speed bounds, or a speed is not finite."""
    terminations: tuple[Termination[Q], ...]
    """The family's ways an episode ends, evaluated in this order."""
    resample: Callable[[Q, Mask], None]
    """New commands or targets for the masked envs (every ``resample_steps``, episodes that go on)."""
    observe: Observe[V]
    """The observation (``Observe``)."""
    events: Events[Q]
    """Resets and what acts around them."""
    report: Report[Q]
    """Measures, metrics, episode statistics and other info."""
    applied: Callable[[torch.Tensor], torch.Tensor] | None = None
    """The actions the joints get this step (e.g. delayed by a latency); None: the clipped actions as they are."""

    def ended(self, q: Q, kind: Literal["fail", "cut"]) -> torch.Tensor | None:
        """``[N]`` bool: an episode ends by a termination of ``kind`` (None: the family has none)."""
        out: torch.Tensor | None = None
        for t in self.terminations:
            if t.kind == kind:
                hit = t.fn(q)
                out = hit if out is None else out | hit
        return out


def nothing(*args: Any) -> None:
    """A part that does nothing."""
