"""Per-name sums of 0-d tensors over many steps, as one stacked add per step (one kernel instead of one per name:
on a GPU each is a launch from Python). The sums are those of per-name adds, bit for bit."""

from __future__ import annotations

import torch


class StackedSums:
    """Sums of dicts of 0-d tensors: one stacked add per ``add`` while every value is 0-d of one dtype and device and
    the names stay the same, else (from then on) one add per name."""

    def __init__(self) -> None:
        self.names: tuple[str, ...] | None = None
        self.total: torch.Tensor | None = None
        self.each: dict[str, torch.Tensor] = {}

    def add(self, values: dict[str, torch.Tensor]) -> None:
        if not values:
            return
        tensors = list(values.values())
        first = tensors[0]
        same = all(v.dim() == 0 and v.dtype == first.dtype and v.device == first.device for v in tensors)
        if same and not self.each and self.names in (None, tuple(values)):
            stacked = torch.stack(tensors)
            self.total = stacked if self.total is None else self.total + stacked
            self.names = tuple(values)
            return
        self._unstack()
        for k, v in values.items():
            self.each[k] = self.each[k] + v if k in self.each else v.clone()

    def _unstack(self) -> None:
        if self.total is not None and self.names is not None:
            self.each.update(zip(self.names, self.total.unbind(), strict=True))
            self.total = None

    def totals(self) -> dict[str, torch.Tensor]:
        """The sum of each name (0-d tensors; views of one tensor while stacked)."""
        self._unstack()
        return dict(self.each)
