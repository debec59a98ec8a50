"""The observation of a task, derived from its table of terms (``envs/tasks/obs_table.py``).

``ObservationLayout`` turns the table, the sizes the task resolved and its config into:

- the full layout ``(name, size)`` (terms of size 0 left out, e.g. a height scan that is switched off) and the
  policy's (without the ``exclude``d terms), with the policy's column index;
- ``exact(values)``: the noise-free observation, each term's raw value (a dict by name) times its ``scale``;
- ``noisy(exact)``: plus uniform noise of each term's level (in physical units, times its scale), then the
  ``clip`` of the terms that have one;
- ``export_scales()``: the scale of every term by its name, for the exported policy's metadata;
- ``mirror_rules()``: the mirror rule of each term, for ``envs/robots/mirror.py``.

A term without a raw value, or a value of the wrong width, fails at the first observation with its name.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from envs.tasks.obs_table import MirrorRule, ObsTerm, config_value


class ObservationLayout:
    """The layout, noise, export and mirror rules of a table for one task instance (module docstring)."""

    def __init__(self, table: Sequence[ObsTerm], sizes: Mapping[str, int], exclude: Sequence[str], cfg: Any,
                 noise_scale: float, device: torch.device):
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
        levels = [torch.full((n,), 0.0) if not self.terms[name].noise else
                  self._noise(self.terms[name], n, cfg) for name, n in self.full]
        self.noise_vec = noise_scale * torch.cat(levels).to(device)
        """Half-width of the uniform noise of each column (scaled units)."""
        self.noise_on = noise_scale > 0
        self._clips = [(starts[name], n, config_value(cfg, self.terms[name].clip) * self._clip_scale(name))
                       for name, n in self.full if self.terms[name].clip]

    def _scale(self, term: ObsTerm, n: int) -> float | torch.Tensor:
        if isinstance(term.scale, tuple):
            if len(term.scale) != n:
                raise ValueError(f"observation term {term.name}: {len(term.scale)} scales for {n} columns")
            return torch.tensor(term.scale, dtype=torch.float32, device=self.device)
        return term.scale

    def _noise(self, term: ObsTerm, n: int, cfg: Any) -> torch.Tensor:
        level = config_value(cfg, term.noise)
        if isinstance(term.scale, tuple):
            return torch.tensor([level * s for s in term.scale])
        return torch.full((n,), level * term.scale)

    def _clip_scale(self, name: str) -> float:
        scale = self.terms[name].scale
        if isinstance(scale, tuple):
            raise ValueError(f"observation term {name}: a clip needs one scale")
        return scale

    def exact(self, values: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The noise-free full observation ``[N, full_dim]`` from each term's raw value ``[N, size]``."""
        parts = []
        for name, n in self.full:
            if name not in values:
                raise KeyError(f"observation term {name!r} has no value (terms given: {', '.join(values)})")
            value, scale = values[name], self._scales[name]
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
