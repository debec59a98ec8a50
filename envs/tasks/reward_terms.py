"""A table of named reward terms for any task family: ``@terms.add`` registers a function under its own name.

    terms = RewardTerms[Context]()

    @terms.add
    def reach(x: Context) -> torch.Tensor:
        return torch.exp(-torch.square(x.distance) / x.params.reach_sigma)

A term's weight is the config field of the same name; ``check`` makes sure weights and terms name the same set
(one line naming the odd one out), ``weighted`` evaluates the switched-on terms. The reaching task uses it
(``envs/tasks/reach/rewards.py``); the locomotion family keeps its own module-level table (same rules).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, cast

import torch

from envs.tasks.locomotion.rewards import check_weights

C = TypeVar("C")


class RewardTerms(Generic[C]):
    """Reward term name -> its function of the step's context ``C`` (in registration order)."""

    def __init__(self) -> None:
        self.table: dict[str, Callable[[C], torch.Tensor]] = {}

    def add(self, fn: Callable[[C], torch.Tensor]) -> Callable[[C], torch.Tensor]:
        """Register ``fn`` as the term of its own name (a decorator)."""
        self.table[fn.__name__] = fn
        return fn

    def check(self, weights: Mapping[str, float]) -> None:
        """The weights and the table name the same terms; otherwise a one-line UserError."""
        check_weights(weights, cast(Any, self.table))  # only the names are compared

    def weighted(self, weights: Mapping[str, float], x: C) -> dict[str, torch.Tensor]:
        """Each switched-on term times its weight (``weights``: already times the control period)."""
        return {name: w * self.table[name](x) for name, w in weights.items()}
