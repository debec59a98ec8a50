"""The real-robot sequence against a robot side written from Unitree's SDK alone (issue 45, the independent check):
``tools/experiments/unitree_side_check.py`` run as a command, a frozen state in the policy phase and another sender,
on the Go2-style test model. Unitree's SDK is not installable here: set ``LEGGED_MJX_UNITREE_SDK`` to a checkout of
unitree_sdk2_python (the folder holding ``unitree_sdk2py``) to run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.menagerie_models import menagerie_root

ROOT = Path(__file__).resolve().parents[2]
SDK = os.environ.get("LEGGED_MJX_UNITREE_SDK", "")


@pytest.mark.slow
@pytest.mark.skipif(not SDK, reason="LEGGED_MJX_UNITREE_SDK (unitree_sdk2_python's folder) is not set")
def test_a_unitree_side_robot_sees_damping_after_a_frozen_state_and_nothing_beside_another_sender(tmp_path):
    root = menagerie_root(tmp_path / "mroot")
    out = tmp_path / "runs.json"
    cmd = [sys.executable, "-m", "tools.experiments.unitree_side_check", "--sdk", SDK, "--mroot", str(root),
           "--profile", "go2", "--fault", "frozen", "--phase", "policy", "--fault", "sender", "--json", str(out)]
    subprocess.run(cmd, cwd=ROOT, check=True, timeout=600, stdin=subprocess.DEVNULL, capture_output=True)
    runs = {r["fault"]: r for r in json.loads(out.read_text())}
    frozen, sender = runs["frozen"], runs["sender"]
    if frozen["spoiled"]:
        pytest.skip(f"every try spoiled by the machine's load: {frozen['spoiled']}")
    assert "frozen" in frozen["line"], frozen["lines"]
    assert frozen["damping_ms"] is not None and frozen["damping_ms"] < 200, frozen
    assert frozen["stiff_after_damping"] == 0
    assert frozen["max_step"] <= 0.6 + 1e-6 and frozen["first"] < 0.2
    assert sender["code"] == 2 and sender["received"] == 0, sender
    assert "another process is sending rt/lowcmd" in sender["error"]
