"""The robot check on a tracking task (issue 47, item 6): ``menagerie:NAME@ENTRY:track``, ``path/to/robot.py:track``
and ``--task humanoid-track`` are checked on the robot the tracking task trains (every joint trained: held joints
judged on their step response; its solver; its start noise), no clip needed; ``--fix`` on one is refused in one
line naming the locomotion task to fix instead."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from configs import menagerie as menagerie_config
from configs.catalog import get_task
from envs.robot_check import verdict
from envs.robots.draft import draft
from envs.robots.menagerie import files_digest, parse, xml_path
from tests.menagerie_models import menagerie_root

pytest.importorskip("mujoco_menagerie")
ROOT = Path(__file__).resolve().parents[3]
G1_TRACK = "menagerie:unitree_g1@g1_mjlab:track"
FEW = 64
"""Random rollouts of 2 s per check here (the tool runs 1024)."""


@pytest.fixture
def served(tmp_path, monkeypatch):
    """The test models served through ``MENAGERIE_ROOT``, the G1-style one's fix cache seeded with its draft's
    gains (the check, not the search, is under test)."""
    from envs import registry

    for name in [n for n in registry.registered_so_far() if n.startswith("menagerie:")]:
        monkeypatch.delitem(registry._REGISTRY, name)
    monkeypatch.setenv("MENAGERIE_ROOT", str(menagerie_root(tmp_path / "menagerie")))
    monkeypatch.setenv("LEGGED_MJX_CACHE", str(tmp_path / "cache"))
    ref = parse(G1_TRACK)
    spec = draft(xml_path(ref), ref.robot_id).spec
    version = menagerie_config.FIX_VERSION
    cached = menagerie_config.cache_dir() / f"{ref.robot_id}-{files_digest(ref)[:16]}-v{version}.json"
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps({"actuators": [dataclasses.asdict(g) for g in spec.actuators],
                                  "sim": dataclasses.asdict(spec.sim), "verdict": "OK", "changes": [], "seconds": 0}))
    return spec


def test_a_g1_by_name_is_checked_on_its_tracking_robot(served):
    assert served.held  # the draft holds the waist and arms: locomotion judges them held, tracking trains them
    report = verdict.check(get_task(G1_TRACK), rollouts=FEW)
    assert report["task"] == G1_TRACK and report["notes"][0].startswith("a tracking task: every joint trained")
    groups = [r["group"] for r in report["step_response"]]
    assert any("waist" in g for g in groups) and not any(g.endswith("(held)") for g in groups), groups
    assert report["standing"]["supported"]  # a biped at its motors' gains: judged with the base supported
    assert report["solver"]["reset_spread"]["joint_offset"] == 0.05  # the tracking start noise
    assert report["solver"]["random_actions"]["rollouts"] == FEW


def test_a_robot_file_and_a_registered_tracking_task_are_checked(tmp_path):
    report = verdict.check(get_task(str(ROOT / "examples" / "go_like" / "go_like.py") + ":track"), rollouts=FEW)
    assert report["verdict"] in ("OK", "WARN"), verdict.render(report)
    assert report["solver"]["reset_spread"]["joint_offset"] > 0.0
    built_in = verdict.check(get_task("humanoid-track"), rollouts=FEW)
    assert len(built_in["step_response"]) == 5 and "tracking task" in built_in["notes"][0]


def test_fix_on_a_tracking_task_is_one_line_naming_the_locomotion_task():
    ref = str(ROOT / "examples" / "go_like" / "go_like.py")
    result = subprocess.run([sys.executable, "-m", "tools.check_robot", f"{ref}:track", "--fix"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    err = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(err) == 1, result.stderr
    assert f"python -m tools.check_robot {ref}:flat --fix" in err[0], err
