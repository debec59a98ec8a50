"""Lint (ruff) and types (mypy) as part of the test suite, so the README's test command and CI run them.

Both are configured in pyproject.toml ([tool.ruff], [tool.mypy]); the output of a failing tool is the message.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", name, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_ruff_check_passes():
    result = _tool("ruff", "check", ".", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes():
    result = _tool("mypy")  # the files and settings in [tool.mypy]
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_ruff_config_catches_a_real_bug(tmp_path):
    # The F823 that ruff found in rl_core/distributed.py: a local import shadows the module used before it.
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "bug.py").write_text("import torch\n\n\ndef f():\n    torch.zeros(1)\n    import torch._dynamo\n")
    result = _tool("ruff", "check", ".", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1 and "F823" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("snippet", ["def f(x: int) -> str:\n    return x\n"])
def test_the_mypy_config_catches_a_type_error(tmp_path, snippet):
    (tmp_path / "bad.py").write_text(snippet)
    result = _tool("mypy", "--config-file", str(ROOT / "pyproject.toml"), str(tmp_path / "bad.py"))
    assert result.returncode == 1 and "Incompatible return value" in result.stdout, result.stdout + result.stderr
