"""The project's own Python files under a folder, for the house tests: virtual environments (a folder holding
``pyvenv.cfg``, e.g. a benchmark's own venv kept next to its script) and caches are not ours and are skipped."""

from __future__ import annotations

import os
from pathlib import Path


def python_files(base: Path) -> list[Path]:
    """Every ``*.py`` under ``base`` (sorted), outside virtual environments and ``__pycache__``."""
    out = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not (Path(folder) / d / "pyvenv.cfg").exists())
        out += [Path(folder) / f for f in files if f.endswith(".py")]
    return sorted(out)
