"""Numbers in the robot check's lines: three significant digits, never ``-0``."""

from __future__ import annotations

import math


def num(x: float) -> str:
    """``28.5012`` -> ``28.5``, ``-0.0`` -> ``0``, ``1234.5`` -> ``1234``, ``0.000123`` -> ``0.000123``; inf and nan
    as words."""
    if not math.isfinite(x):
        return "inf" if x > 0 else "-inf" if x < 0 else "nan"
    if abs(x) >= 1000:
        text = f"{x:.0f}"
    else:
        text = f"{x:.3g}"
        if "e" in text:
            text = f"{x:.2e}"
    return "0" if text.lstrip("-").strip("0.") == "" else text


def pct(share: float) -> str:
    """A share as a percentage with up to three significant digits: ``0.8`` -> ``80%``, ``0.0123`` -> ``1.23%``."""
    return f"{num(100.0 * share)}%"
