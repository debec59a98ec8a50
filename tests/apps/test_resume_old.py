"""tools/experiments/resume_old.py: a checkpoint of another checkout resumed and played here (issue 49's check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def resume_old(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools.experiments.resume_old", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_a_folder_without_train_py_is_refused_in_one_line(tmp_path):
    p = resume_old("--old", str(tmp_path))
    assert p.returncode == 2
    assert p.stdout.strip() == f"--old={tmp_path}: no train.py there; expected an older checkout of this repository"


@pytest.mark.slow
def test_this_checkouts_own_checkpoint_resumes_and_plays(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True, timeout=60)
    p = resume_old("--old", str(old), "--task", "arm-reach", "--num-envs", "16", "--timeout", "300", timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip() == "| arm-reach | written | resumed | played |"
