"""A task family is its own folder, config and sim2sim module, with 0 edits elsewhere (issue 49; docs/design.md):
``tools/experiments/family_edits.py`` adds a renamed copy of ``reach`` to a copy of the project in those three
places only and checks it is found (the default run), then trains, exports and plays it (slow); without its
``FAMILY`` declaration it is not found (slow: the check can fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def family_edits(*flags: str, timeout: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "tools.experiments.family_edits", *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert done.stdout.strip(), done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if result["ok"] else 1), done.stderr[-2000:]
    return result


def test_a_new_family_in_its_own_three_places_is_found_with_no_other_file_edited():
    result = family_edits("--quick", timeout=300)
    assert result["edits_elsewhere"] == 0 and result["places"] == [
        "envs/tasks/toyreach/", "configs/toyreach.py", "deploy/sim2sim_toyreach.py"]
    found = result["found"]
    assert found["module"] == "deploy.sim2sim_toyreach" and found["task"] and found["house_tests"], found
    assert result["ok"]


@pytest.mark.slow
def test_the_new_family_trains_exports_and_plays_in_sim2sim():
    result = family_edits(timeout=900)
    assert result["ok"] and result["edits_elsewhere"] == 0, result
    assert result["exported"] == {"task_family": "toyreach", "problems": [], "ok": True}
    metrics = result["sim2sim"]["metrics"]
    assert metrics["task"] == "toy-reach" and metrics["runtime"] == "onnxruntime in plain MuJoCo", metrics
    assert 0.0 <= metrics["distance"] < 5.0 and metrics["episodes"] == 2, metrics


@pytest.mark.slow
def test_without_its_declaration_the_family_is_not_found():
    result = family_edits("--quick", "--undeclared", timeout=300)
    assert not result["ok"] and result["found"]["module"] is None and result["edits_elsewhere"] == 0, result
