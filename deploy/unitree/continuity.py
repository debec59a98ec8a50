"""Targets that cannot jump: ``StepGuard`` sits between the sequence and ``rt/lowcmd`` and bounds every change of a
driven joint's target, whatever phase wrote it (damping, pose, hold, policy, e-stop, end).

    damping command   no driven joint has stiffness (kp 0): its target means nothing; the guard forgets the last
                      target, and a non-finite one (a NaN state's position) is sent as 0
    first stiff one   after damping (or at the start), each target is clipped to within ``first_offset`` of the
                      measured position: the move starts where the joint is
    any other stiff   each target is clipped to within ``max_step`` of the previous stiff command's target

Each command's largest step is recorded with the phase that wrote it, so a test (and the fault table of
docs/deploy.md) reads the largest step at every change of phase.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from deploy.runtime.robot import JointCommand


class StepGuard:
    """Bounds the target steps of the joints ``driven`` (robot order indices)."""

    def __init__(self, driven: np.ndarray, max_step: float, first_offset: float):
        self.driven = np.asarray(driven)
        self.max_step, self.first_offset = max_step, first_offset
        self.last: Optional[np.ndarray] = None
        """The previous stiff command's targets of the driven joints (None after damping)."""
        self.phase = ""
        self.largest: dict[str, float] = {}
        """Largest target step (rad) of a stiff command by phase change (``"pose>hold"``) or phase (``"pose"``);
        a first stiff command counts its offset from the measured position."""
        self.clipped = 0
        """Stiff commands the guard had to change."""

    def _note(self, key: str, step: float) -> None:
        self.largest[key] = max(self.largest.get(key, 0.0), step)

    def apply(self, cmd: JointCommand, q: np.ndarray, phase: str) -> JointCommand:
        """``cmd`` (robot order) made safe; ``q``: the measured positions (robot order); ``phase``: who wrote it."""
        d = self.driven
        target = np.asarray(cmd.target, dtype=np.float64)
        if not np.any(np.asarray(cmd.kp)[d] > 0):
            self.last = None
            self.phase = phase
            return dataclasses.replace(cmd, target=np.where(np.isfinite(target), target, 0.0))
        if self.last is None:
            ref, bound, key = np.asarray(q, dtype=np.float64)[d], self.first_offset, f"{phase} (first stiff)"
        else:
            ref, bound = self.last, self.max_step
            key = phase if phase == self.phase else f"{self.phase}>{phase}"
        want = target[d]
        safe = np.clip(want, ref - bound, ref + bound)
        if not np.array_equal(safe, want):
            self.clipped += 1
        self._note(key, float(np.max(np.abs(safe - ref))) if len(d) else 0.0)
        target = target.copy()
        target[d] = safe
        self.last, self.phase = safe, phase
        return dataclasses.replace(cmd, target=target)
