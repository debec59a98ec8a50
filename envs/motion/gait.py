"""Gait statistics from feet's contact signals: duty factor per foot and the feet's relative phases, pooled over
clips, and how far one gait is from another (tools/experiments/gait_match.py; docs/motion.md's AMP numbers).
numpy only."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def phase_angles(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Angles (rad) of foot ``b``'s touchdowns after each of foot ``a``'s over ``a``'s stride (``[F]`` bool contact
    signals of one clip); none where ``a`` touches down fewer than 3 times."""
    down_a = np.flatnonzero(a[1:] & ~a[:-1]) + 1
    down_b = np.flatnonzero(b[1:] & ~b[:-1]) + 1
    if len(down_a) < 3 or len(down_b) < 1:
        return []
    period = float(np.median(np.diff(down_a)))
    angles = []
    for t in down_a[:-1]:
        later = down_b[down_b >= t]
        if len(later):
            angles.append(2 * math.pi * ((later[0] - t) / period % 1.0))
    return angles


def circular_mean(angles: list[float]) -> float | None:
    """The mean of angles (rad) on the circle as a share of a turn in [0, 1); None for no angles."""
    if not angles:
        return None
    mean = math.atan2(np.mean(np.sin(angles)), np.mean(np.cos(angles)))
    return (mean / (2 * math.pi)) % 1.0


def gait(signals: list[np.ndarray], feet: tuple[str, ...]) -> dict[str, Any]:
    """Duty factor per foot and the phase of every other foot after the first, pooled over clips' ``[F, feet]``
    contact signals (all their frames, all their touchdowns)."""
    every = np.concatenate(signals)
    return {"duty_factor": {f: float(every[:, k].mean()) for k, f in enumerate(feet)},
            "phase_after_" + feet[0]: {
                f: circular_mean([x for s in signals for x in phase_angles(s[:, 0], s[:, k])])
                for k, f in enumerate(feet) if k}}


def compare(ref: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """Relative duty-factor differences and circular phase distances (None where a phase is undefined)."""
    duty = {f: abs(got["duty_factor"][f] - d) / d for f, d in ref["duty_factor"].items()}
    key = next(k for k in ref if k.startswith("phase_after_"))
    phases = {}
    for f, p in ref[key].items():
        q = got[key][f]
        phases[f] = None if p is None or q is None else min(abs(p - q), 1 - abs(p - q))
    worst = max([*duty.values(), *(v for v in phases.values() if v is not None)])
    return {"duty_factor_rel_diff": duty, "phase_diff": phases, "worst": worst, "within_10_percent": worst <= 0.1}
