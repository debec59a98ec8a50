"""tools/experiments/mjlab_gains.py (docs/robots.md's G1-style run on mjlab's rule), run as a user runs it on the
served G1-style model: trained groups take kp = J w^2, kd = 4 J w and the effort action scale; held groups keep the
draft's; the solver is appended."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.menagerie_models import menagerie_root

ROOT = Path(__file__).resolve().parents[3]
pytest.importorskip("mujoco_menagerie")


def test_trained_groups_take_mjlab_s_rule_and_held_ones_keep_the_draft_s(tmp_path):
    env = {**os.environ, "MENAGERIE_ROOT": str(menagerie_root(tmp_path / "men"))}
    out = tmp_path / "g1m.py"
    done = subprocess.run([sys.executable, "-m", "tools.experiments.mjlab_gains", "menagerie:unitree_g1@g1_mjlab",
                           str(out), "--iterations", "4", "--ls-iterations", "6"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    for joints, kp, kd, effort in ((".*_hip_pitch_joint|.*_hip_yaw_joint", 40.18, 2.558, 88.0),
                                   (".*_hip_roll_joint|.*_knee_joint", 99.1, 6.309, 139.0),
                                   (".*_ankle_pitch_joint|.*_ankle_roll_joint", 28.5, 1.814, 50.0)):
        assert (f'ActuatorGroup(joints="{joints}", kp={kp}, kd={kd}, effort_limit={effort}, '
                f'action_scale="effort")') in text
    assert 'ActuatorGroup(joints="waist_yaw_joint", kp=174.0, kd=13.7, effort_limit=88.0),' in text  # held: kept
    assert 'integrator="implicitfast", iterations=4, ls_iterations=6)' in text
