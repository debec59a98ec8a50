"""A table of named reward terms for any task family: ``@TERMS.add`` registers a function under its own name.

    TERMS = RewardTerms[Context]()

    @TERMS.add
    def reach(x: Context) -> torch.Tensor:
        return torch.exp(-torch.square(x.distance) / x.params.reach_sigma)

A term's weight is the config field of the same name (``weights_of`` reads them from a weights dataclass);
``check`` makes sure the weights and the terms name the same set (one line naming the odd one out),
``stacked`` evaluates the switched-on terms as one ``[terms, N]`` tensor (one multiply by ``weight_column``).
Both families use it (``envs/tasks/locomotion/rewards.py``, ``envs/tasks/reach/rewards.py``).

A term with memory is a ``StatefulTerm`` (mjlab's class terms), registered as an instance: it declares the state
fields it owns (``State``, merged into the family's state by ``TaskState.merged(*TERMS.owned_states())``), its
update before the rewards and after the step (``update``, ``settle``, called by the task base's recipe for every
stateful term, whatever its weight) and its value; its fields' reset is their ``per_env`` reset. A stateful term
is its module and its weight: no state, env or measure file is edited.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import fields
from typing import Any, ClassVar, Generic, TypeVar

import torch

from contract.errors import UserError
from envs.tasks.state import TaskState

C = TypeVar("C")


class StatefulTerm(Generic[C]):
    """A reward term that owns per-env state (module docstring); a subclass sets ``name`` and ``State`` and
    defines ``__call__`` (and ``update`` / ``settle`` where its state moves)."""

    name: ClassVar[str]
    """The term's name (its weight is the config field of this name)."""
    State: ClassVar[type[TaskState]]
    """The fields it owns (a ``TaskState`` dataclass): allocated with every env, reset by each field's
    ``per_env`` reset, saved and restored in checkpoints by name, static in the CUDA graph."""

    def update(self, x: C) -> None:
        """Each step after the measure, before any reward term is evaluated."""

    def settle(self, x: C) -> None:
        """Each step after the terminations, before resamples, the observation and the resets."""

    def __call__(self, x: C) -> torch.Tensor:
        raise NotImplementedError


class RewardTerms(Generic[C]):
    """Reward term name -> its function of the step's context ``C`` (in registration order)."""

    def __init__(self, section: str = "env.rewards") -> None:
        self.section = section
        """Where the weights live in the config (for the error lines)."""
        self.table: dict[str, Callable[[C], torch.Tensor]] = {}
        self.preconditions: dict[str, Callable[[Any], str | None]] = {}
        """Term name -> what it needs of the run's constants: None when met, else what is missing (one line)."""
        self.stateful: list[StatefulTerm[C]] = []
        """The terms that own state, in registration order."""

    def add(self, fn: Callable[[C], torch.Tensor] | None = None, *,
            requires: Callable[[Any], str | None] | None = None) -> Any:
        """Register ``fn`` as the term of its own name (a decorator: ``@TERMS.add``, or
        ``@TERMS.add(requires=check)`` with its precondition next to it), or a ``StatefulTerm`` instance under its
        ``name``."""
        def register(f: Callable[[C], torch.Tensor]) -> Callable[[C], torch.Tensor]:
            name = f.name if isinstance(f, StatefulTerm) else f.__name__
            self.table[name] = f
            if isinstance(f, StatefulTerm):
                self.stateful.append(f)
            if requires is not None:
                self.preconditions[name] = requires
            return f

        return register if fn is None else register(fn)

    def owned_states(self) -> tuple[type[TaskState], ...]:
        """The state dataclasses the stateful terms own (``TaskState.merged`` appends them to a family's state)."""
        return tuple(t.State for t in self.stateful)

    def update(self, x: C) -> None:
        """Every stateful term's ``update`` (before the rewards)."""
        for t in self.stateful:
            t.update(x)

    def settle(self, x: C) -> None:
        """Every stateful term's ``settle`` (after the terminations)."""
        for t in self.stateful:
            t.settle(x)

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __getitem__(self, name: str) -> Callable[[C], torch.Tensor]:
        return self.table[name]

    def check(self, weights: Mapping[str, float]) -> None:
        """The weights and the table name the same terms; otherwise a one-line UserError naming the odd one."""
        for name in weights:
            if name not in self.table:
                raise UserError(f"config error: {self.section}.{name} has no reward term in the table; terms: "
                                f"{', '.join(self.table)}")
        for name in self.table:
            if name not in weights:
                raise UserError(f"reward term '{name}' has no weight in {self.section}; weights: "
                                f"{', '.join(weights)}")

    def check_preconditions(self, switched_on: Iterable[str], constants: Any) -> None:
        """Each switched-on term's precondition holds for ``constants``; otherwise one line naming the term."""
        for name in switched_on:
            missing = self.preconditions[name](constants) if name in self.preconditions else None
            if missing:
                raise UserError(f"config error: {self.section}.{name} {missing}")

    def stacked(self, weights: Mapping[str, float], column: torch.Tensor, x: C) -> torch.Tensor:
        """``[terms, N]``: each switched-on term times its weight, in the order of ``weights`` (already times the
        control period), with one multiply for every term (``column``: ``weight_column(weights)``, made once)."""
        return torch.stack([self.table[name](x) for name in weights]) * column


def weight_column(weights: Mapping[str, float], device: torch.device) -> torch.Tensor:
    """The weights as a ``[terms, 1]`` float32 tensor (a weight times a float32 term is a float32 product either
    way, so ``RewardTerms.stacked`` gives ``weight * term`` bit for bit)."""
    return torch.tensor(list(weights.values()), dtype=torch.float32, device=device).unsqueeze(1)


def weights_of(scales: Any) -> dict[str, float]:
    """The weight of every reward term: every field of a weights dataclass (it holds weights only; what a term
    reads, such as a kernel width, is a field of the family's reward parameters)."""
    return {f.name: getattr(scales, f.name) for f in fields(scales)}
