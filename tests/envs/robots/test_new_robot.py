"""``tools.new_robot`` (issue 37, item 4): a RobotSpec drafted from a robot file alone. The draft of each example
model matches its hand-written spec in examples/ (feet, trained / held / welded joints, mirror pairs); the drafted
file is readable (a comment per value), imports and builds; bad input is one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import mujoco
import pytest

from configs.catalog import get_task
from contract.errors import UserError
from envs.robot_check.verdict import robot_of
from envs.robots.draft import draft
from envs.robots.resolved import ResolvedRobot
from envs.robots.sides import twins
from envs.scenes.assemble import build
from tests.robot_models import write

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ("anymal_like", "go_like", "h1_like")


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.new_robot", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def _foot_bodies(rb: ResolvedRobot) -> set[str]:
    return {rb.model.body(int(rb.model.geom_bodyid[g])).name for gs in rb.foot_geom_ids for g in gs}


def _pairs(names: tuple[str, ...]) -> set[frozenset[str]]:
    return {frozenset((a, b)) for a, b in zip(names, twins(names), strict=True) if a != b}


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_draft_of_each_example_matches_its_hand_written_spec(name):
    d = draft(ROOT / "examples" / name / f"{name}.xml", name)
    drafted = build(d.spec)
    written = robot_of(get_task(str(ROOT / "examples" / name / f"{name}.py") + ":flat"))
    assert _foot_bodies(drafted) == _foot_bodies(written)
    assert set(drafted.joint_names) == set(written.joint_names)
    assert set(drafted.held_joint_names) == set(written.held_joint_names)
    assert set(drafted.welded_joint_names) == set(written.welded_joint_names)
    assert _pairs(drafted.joint_names) == _pairs(written.joint_names) != set()
    assert {frozenset(p) for p in d.mirror_pairs} == _pairs(drafted.joint_names)
    pose = dict(zip(written.joint_names, written.default_joint_pos, strict=True))
    assert dict(zip(drafted.joint_names, drafted.default_joint_pos, strict=True)) == pytest.approx(pose)


def test_unnamed_feet_among_a_bodys_geoms_are_drafted_by_class():
    """anymal_like's shanks carry four unnamed collision geoms; the draft picks the foot sphere (class "foot"),
    go_like's named foot spheres by name, h1_like's three capsules per foot as the ankle body."""
    anymal = draft(ROOT / "examples" / "anymal_like" / "anymal_like.xml", "a").spec
    (foot,) = anymal.foot_geoms
    assert not isinstance(foot, str) and foot.geom_class == "foot" and not anymal.foot_bodies
    assert draft(ROOT / "examples" / "go_like" / "go_like.xml", "g").spec.foot_geoms == ("FL", "FR", "RL", "RR")
    assert draft(ROOT / "examples" / "h1_like" / "h1_like.xml", "h").spec.foot_bodies == (".*_ankle_roll_link",)


def test_the_drafted_file_is_commented_imports_and_builds(tmp_path):
    out = tmp_path / "h1.py"
    result = _tool(str(ROOT / "examples" / "h1_like" / "h1_like.xml"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"next: python -m tools.check_robot {out}:flat --fix --write" in result.stdout
    text = out.read_text()
    comments = re.sub(r"\n\s*# ", " ", text)  # wrapped comment lines joined
    for words in ("the body with the free joint", "the file's keyframe 'home'", "the file's motors",
                  "armature 0.01 (the file has none)", "9 joints off the legs, held by servos",
                  "2 hand / wrist / finger joints, welded", "implicitfast: the file has MuJoCo's default Euler",
                  "left-right twins from the names", "flat = drafted_task(", "rough = drafted_task("):
        assert words in comments, words
    assert max(len(line) for line in text.splitlines()) <= 120
    task = get_task(f"{out}:flat")
    spec = robot_of(task).spec
    d = draft(ROOT / "examples" / "h1_like" / "h1_like.xml", "h1_like")
    assert spec == d.spec  # the file says what the draft found, value for value
    cfg = task.default_config()
    assert cfg.algorithm.symmetry == "augment" and cfg.env.reward_params.base_height_target == pytest.approx(0.951)
    assert get_task(f"{out}:rough").default_config().env.terrain.type == "generated"
    assert _tool(str(ROOT / "examples" / "h1_like" / "h1_like.xml"), "--out", str(out)).returncode == 2  # exists


def test_bad_input_is_one_line(tmp_path):
    arm = write(tmp_path, "arm.xml", '<mujoco><worldbody><body name="link"><joint name="j" axis="0 0 1"/>'
                                     '<geom size="0.05"/></body></worldbody></mujoco>')
    for args, words in (([str(tmp_path / "nope.xml")], "does not exist"),
                        ([str(arm)], "no free joint: not a floating-base robot")):
        result = _tool(*args)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert words in result.stderr, result.stderr
    with pytest.raises(UserError, match="does not compile"):
        draft(write(tmp_path, "bad.xml", "<mujoco><worldbody><geom type='nope'/></worldbody></mujoco>"), "bad")
    assert mujoco.__version__
