"""The observation of a task, derived from its table of terms (``envs/tasks/obs_table.py``).

``ObservationLayout`` turns the table, the sizes the task resolved and its config into:

- the full layout ``(name, size)`` (terms of size 0 left out, e.g. a height scan that is switched off) and the
  policy's (without the ``exclude``d terms), with the policy's column index;
- ``exact(x)``: the noise-free observation, each term's raw value (its row's ``value`` of the family's inputs
  ``x``) times its ``scale``;
- ``noisy(exact)``: plus uniform noise of each term's level (in physical units, times its scale), then the
  ``clip`` of the terms that have one;
- ``bounds(b)``: per column the largest magnitude a sane world shows (each row's ``bound`` in physical units,
  times its scale, with a margin; the family's limit for rows without one);
- ``observe(x, bound, ...)``: every family's ending: the exact observation, the policy's noisy columns with
  non-finite values replaced by 0, and the validity check (a value beyond its bound, or not finite);
- ``export_scales()``: the scale of every term by its name, for the exported policy's metadata;
- ``mirror_rules()``: the mirror rule of each term, for ``envs/robots/mirror.py``.

A row without a value fails at import (``obs_table.declared``); a value or a bound of the wrong width fails with
the term's name.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

import torch

from envs.tasks.bounds import every
from envs.tasks.obs_table import MirrorRule, ObsTerm

X = TypeVar("X")
C = TypeVar("C")
FLOAT32_MAX = float(torch.finfo(torch.float32).max)
"""The bound of a column without one: any finite value (inf and NaN fail the ``<=``)."""
BOUND_MARGIN = 1.0 + 1e-4
"""A declared bound is widened by this factor (rounding of the values that reach it exactly)."""


def finite(t: torch.Tensor) -> torch.Tensor:
    """``t`` with NaN and +-inf replaced by 0 (what a policy or a critic reads)."""
    return torch.nan_to_num(t, nan=0.0, posinf=0.0, neginf=0.0)


class Observed(NamedTuple):
    """What ``ObservationLayout.observe`` gives."""

    exact: torch.Tensor
    """``[n, full_dim]`` the noise-free full observation (the critic's; non-finite values kept)."""
    policy: torch.Tensor
    """``[n, policy width]`` the policy's columns, noisy and clipped, non-finite values replaced by 0."""
    bad: torch.Tensor | None
    """``[n]`` bool: a noise-free value was beyond its column's bound or not finite (None: not checked)."""


class ObservationLayout(Generic[X, C]):
    """The layout, values, noise, bounds, export and mirror rules of a table for one task instance (module
    docstring); ``X`` the family's observation inputs, ``C`` its config."""

    def __init__(self, table: Sequence[ObsTerm[X, Any, C]], sizes: Mapping[str, int], exclude: Sequence[str],
                 cfg: C, noise_scale: float, device: torch.device):
        self.terms = {t.name: t for t in table}
        resolved = [(t.name, t.size if isinstance(t.size, int) else sizes[t.size]) for t in table]
        self.full = tuple((name, n) for name, n in resolved if n > 0)
        """Every term of the full observation (the critic's), ``(name, size)`` in order."""
        self.policy = tuple((name, n) for name, n in self.full if name not in exclude)
        """The policy's terms, ``(name, size)`` in order (exported for deployment)."""
        starts = dict(zip([n for n, _ in self.full], itertools.accumulate([n for _, n in self.full], initial=0),
                          strict=False))  # accumulate gives one more (the total)
        self.start = starts
        """Column where each term of the full observation starts."""
        self.full_dim = sum(n for _, n in self.full)
        kept = [c for name, n in self.policy for c in range(starts[name], starts[name] + n)]
        self.policy_columns = None if len(kept) == self.full_dim else torch.tensor(kept, dtype=torch.long,
                                                                                     device=device)
        """Columns of the policy's terms in the full observation (None: all)."""
        self.device = device
        self._scales = {name: self._scale(self.terms[name], n) for name, n in self.full}
        levels = [torch.full((n,), 0.0) if self.terms[name].noise is None else
                  self._noise(self.terms[name], n, cfg) for name, n in self.full]
        self.noise_vec = noise_scale * torch.cat(levels).to(device)
        """Half-width of the uniform noise of each column (scaled units)."""
        self.noise_on = noise_scale > 0
        self._clips = [(starts[name], n, float(clip(cfg)) * self._clip_scale(name))
                       for name, n in self.full if (clip := self.terms[name].clip) is not None]

    def _scale(self, term: ObsTerm[X, Any, C], n: int) -> float | torch.Tensor:
        if isinstance(term.scale, tuple):
            if len(term.scale) != n:
                raise ValueError(f"observation term {term.name}: {len(term.scale)} scales for {n} columns")
            return torch.tensor(term.scale, dtype=torch.float32, device=self.device)
        return term.scale

    def _noise(self, term: ObsTerm[X, Any, C], n: int, cfg: C) -> torch.Tensor:
        assert term.noise is not None
        level = float(term.noise(cfg))
        if isinstance(term.scale, tuple):
            return torch.tensor([level * s for s in term.scale])
        return torch.full((n,), level * term.scale)

    def _clip_scale(self, name: str) -> float:
        scale = self.terms[name].scale
        if isinstance(scale, tuple):
            raise ValueError(f"observation term {name}: a clip needs one scale")
        return scale

    def exact(self, x: X) -> torch.Tensor:
        """The noise-free full observation ``[N, full_dim]`` from each term's raw value ``[N, size]`` of ``x``."""
        parts = []
        for name, n in self.full:
            read = self.terms[name].value
            if read is None:
                raise ValueError(f"observation term {name!r} has no value")
            value, scale = read(x), self._scales[name]
            if value.shape[-1] != n:
                raise ValueError(f"observation term {name!r} is {value.shape[-1]} wide, the layout says {n}")
            parts.append(value if isinstance(scale, float) and scale == 1.0 else value * scale)
        return torch.cat(parts, dim=1)

    def noisy(self, exact: torch.Tensor, generator: torch.Generator, num_envs: int,
              rows: torch.Tensor | None = None) -> torch.Tensor:
        """``exact`` plus the noise (drawn for all ``num_envs`` envs so that the random stream does not depend on
        ``rows``: the envs ``exact`` holds, None for all), clipped; a new tensor when noise is on."""
        if not self.noise_on:
            return exact
        shape = (num_envs, exact.shape[1])  # (2 u - 1) x noise_vec, in place on the fresh draw
        noise = torch.rand(shape, generator=generator, device=self.device).mul_(2.0).sub_(1.0).mul_(self.noise_vec)
        obs = exact + (noise if rows is None else noise[rows])
        for start, n, clip in self._clips:
            obs[:, start:start + n].clamp_(-clip, clip)
        return obs

    def bounds(self, b: Any, unbounded: float = FLOAT32_MAX) -> torch.Tensor:
        """Per column of the full noise-free observation, the largest magnitude a sane world shows: a row's
        ``bound(b, width)`` (physical units) times its scale, times ``BOUND_MARGIN``, finite; ``unbounded`` (scaled
        units) for the columns of rows without a bound."""
        cols: list[float] = []
        declared: list[bool] = []
        for name, n in self.full:
            term = self.terms[name]
            scales = list(term.scale) if isinstance(term.scale, tuple) else [term.scale] * n
            physical = [0.0] * n if term.bound is None else term.bound(b, n)
            if len(physical) != n:
                raise ValueError(f"observation term {name!r}: {len(physical)} bounds for {n} columns")
            cols += [p * s for p, s in zip(physical, scales, strict=True)]
            declared += [term.bound is not None] * n
        bound = (torch.tensor(cols, dtype=torch.float32, device=self.device) * BOUND_MARGIN).clamp(max=FLOAT32_MAX)
        limit = torch.full_like(bound, unbounded)
        return torch.where(torch.tensor(declared, dtype=torch.bool, device=self.device), bound, limit)

    def observe(self, x: X, bound: torch.Tensor, generator: torch.Generator, num_envs: int,
                rows: torch.Tensor | None = None, check: bool = True) -> Observed:
        """Every family's ending: the exact observation of ``x``, the policy's (noisy, clipped, ``finite``) and with
        ``check`` the validity check against ``bound`` (``bounds``; the noise and the policy's columns are finite
        where the noise-free values are). ``rows``: ``x`` holds these envs only (the noise is still drawn for all
        ``num_envs`` envs, so the random stream and every observed value are those of a full observation)."""
        exact = self.exact(x)
        policy = finite(self.for_policy(self.noisy(exact, generator, num_envs, rows)))
        bad = ~every(exact.abs() <= bound) if check else None
        return Observed(exact, policy, bad)

    def for_policy(self, full: torch.Tensor) -> torch.Tensor:
        """The policy's columns of a full observation."""
        return full if self.policy_columns is None else full.index_select(1, self.policy_columns)

    def export_scales(self) -> dict[str, float | list[float]]:
        """Each term's scale by name (every term of the full observation), for the exported metadata."""
        out: dict[str, float | list[float]] = {}
        for name, _ in self.full:
            scale = self.terms[name].scale
            out[name] = list(scale) if isinstance(scale, tuple) else float(scale)
        return out

    def mirror_rules(self) -> dict[str, MirrorRule]:
        """Each term's mirror rule by name."""
        return {name: self.terms[name].mirror for name, _ in self.full}
