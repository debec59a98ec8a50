"""``check_robot --fix [--write]`` on a robot file (issue 37, item 3): the settings found, printed as a diff of the
file (only the keyword arguments that changed; comments and the rest kept; the spec classes the new values need
imported) and written with ``--write``; a second run has nothing to change."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from envs.robots.spec import ActuatorGroup, RobotSpec, SimOverrides
from envs.robots.spec_source import changed_fields, edited
from tests.menagerie_models import anymal_c_xml
from tests.robot_models import write

ROOT = Path(__file__).resolve().parents[3]

ROBOT_FILE = '''"""An ANYbotics-style robot as a new user writes it."""
from pathlib import Path

from configs.locomotion import flat_task
from envs.robots.spec import FILE_ACTUATORS, FootGeom, RobotSpec, SimOverrides

ANYC = RobotSpec(
    name="anyc",
    mjcf=Path(__file__).with_name("anymal_c.xml"),
    base_body="base",
    joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"),
    default_pose={".*_HAA": 0.0, ".F_HFE": 0.4, ".H_HFE": -0.4, ".F_KFE": -0.8, ".H_KFE": 0.8},
    actuators=FILE_ACTUATORS,  # the file's servos
    action_scale=0.25,
    base_height=0.62,
    foot_geoms=(FootGeom(".._SHANK", geom_class="foot"),),
    termination_contacts=("base",),  # the trunk ends an episode
)

flat = flat_task("anyc-flat", ANYC)
'''


def _spec(path: Path) -> RobotSpec:
    namespace: dict = {"__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["ANYC"]


def test_the_changed_fields_are_rewritten_in_place(tmp_path):
    path = write(tmp_path, "anyc.py", ROBOT_FILE)
    write(tmp_path, "anymal_c.xml", anymal_c_xml())
    old = _spec(path)
    new = dataclasses.replace(old, actuators=(ActuatorGroup(".*", kp=100.0, kd=3.27, effort_limit=80.0),),
                              sim=SimOverrides(iterations=8, ls_iterations=10, cone="pyramidal"))
    assert changed_fields(old, new) == ["actuators", "sim"]
    text = edited(ROBOT_FILE, "ANYC", old, new, comment="check_robot --fix")
    ast.parse(text)
    assert "    actuators=(  # check_robot --fix\n        ActuatorGroup(joints=\".*\", kp=100.0, kd=3.27" in text
    assert "    sim=SimOverrides(iterations=8, ls_iterations=10, cone=\"pyramidal\"),  # check_robot --fix\n" in text
    assert "# the trunk ends an episode" in text and "the file's servos" not in text  # the old value's comment
    assert "from envs.robots.spec import ActuatorGroup  # added by check_robot --fix" in text
    path.write_text(text)
    assert _spec(path) == new


@pytest.mark.slow
def test_fix_write_on_a_robot_file(tmp_path):
    path = write(tmp_path, "anyc.py", ROBOT_FILE)
    write(tmp_path, "anymal_c.xml", anymal_c_xml())

    def tool(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tools.check_robot", f"{path}:flat", "--fix", "--rollouts", "128",
                               *args], cwd=ROOT, capture_output=True, text=True, timeout=600)

    result = tool("--write")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert ": OK" in out.splitlines()[0] and "fix: .*: kd 0 -> " in out, out
    assert f"--- a/{path}" in out and "+    actuators=(  # check_robot --fix" in out and f"written: {path}" in out
    fixed = _spec(path)
    assert not isinstance(fixed.actuators, str) and fixed.actuators[0].kd > 0
    again = tool()
    assert again.returncode == 0 and "--fix: nothing to change" in again.stdout, again.stdout + again.stderr


DRAFTED = '''"""A drafted robot file (its groups say where their values came from)."""
from pathlib import Path

from envs.robots.spec import ActuatorGroup, FootGeom, RobotSpec

ANYC = RobotSpec(
    name="anyc",
    mjcf=Path(__file__).with_name("anymal_c.xml"),
    base_body="base",
    joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"),
    default_pose={".*_HAA": 0.0, ".F_HFE": 0.4, ".H_HFE": -0.4, ".F_KFE": -0.8, ".H_KFE": 0.8},
    actuators=(
        # no actuator in the file: effort limit guessed as the robot's weight x 0.1 m (check the motor's datasheet)
        ActuatorGroup(joints=".*_HAA", kp=51.0, kd=1.28, effort_limit=51.0),
        # kp = 1 x effort limit, kd = kp x 0.025
        ActuatorGroup(joints=".*_(HFE|KFE)", kp=80.0, kd=2.0, effort_limit=80.0),
    ),
    action_scale=0.25,
    base_height=0.62,
    foot_geoms=(FootGeom(".._SHANK", geom_class="foot"),),
)
'''


def test_fix_write_keeps_the_drafts_provenance_comments(tmp_path):
    """Issue 46, point 6: the changed group is rewritten in place under its provenance comment, with a line saying
    what --fix changed and why; the unchanged group and its comment stay; lines stay within 120 characters."""
    from envs.robots.draft_edit import edited_keeping_comments

    path = write(tmp_path, "anyc.py", DRAFTED)
    write(tmp_path, "anymal_c.xml", anymal_c_xml())
    old = _spec(path)
    assert not isinstance(old.actuators, str)
    groups = (dataclasses.replace(old.actuators[0], kp=40.0, kd=1.0), old.actuators[1])
    new = dataclasses.replace(old, actuators=groups, sim=SimOverrides(iterations=8, ls_iterations=10))
    why = ".*_HAA: kp 51 -> 40, kd 1.28 -> 1 (into the makers' band " + "kp 15-40 (0.75 x effort limit 51 N m) " * 3
    text = edited_keeping_comments(DRAFTED, "ANYC", old, new, [why + ")", ".*_KFE: unrelated"])
    for kept in ("# no actuator in the file: effort limit guessed as the robot's weight x 0.1 m (check the motor's",
                 "        # kp = 1 x effort limit, kd = kp x 0.025\n        ActuatorGroup(joints=\".*_(HFE|KFE)\", "
                 "kp=80.0"):
        assert kept in text
    assert ("        # check_robot --fix: kp 51 -> 40, kd 1.28 -> 1 (into the makers' band" in text
            and "ActuatorGroup(joints=\".*_HAA\", kp=40.0, kd=1.0, effort_limit=51.0)," in text)
    assert "unrelated" not in text and "sim=SimOverrides(iterations=8, ls_iterations=10)" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    path.write_text(text)
    assert _spec(path) == new
