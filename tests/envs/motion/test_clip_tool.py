"""``python -m tools.clip`` (issue 47, item 8): inspect, trim, convert and replay a LAFAN1 CSV of the G1-style
humanoid written here, served by name through ``MENAGERIE_ROOT``; one-line refusals. The tool runs as a child
process with a time limit (tests do not import tools)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contract import motion
from envs.motion import edit, formats
from tests.envs.tasks.test_track_robots import lafan1_rows, write_csv
from tests.robot_models import G1_JOINTS, g1_like_xml

ROOT = Path(__file__).resolve().parents[3]
pytest.importorskip("mujoco_menagerie")


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "menagerie" / "unitree_g1"
    folder.mkdir(parents=True)
    (folder / "g1.xml").write_text(g1_like_xml())
    return tmp_path / "menagerie"


def _tool(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MENAGERIE_ROOT": str(root)}
    return subprocess.run([sys.executable, "-m", "tools.clip", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)


def test_inspect_trim_and_convert_a_lafan1_csv(root, tmp_path):
    walk = write_csv(tmp_path / "walk.csv", lafan1_rows(frames=301))  # 10 s at 30 fps
    out = _tool(root, "inspect", str(walk), "--robot", "menagerie:unitree_g1")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "walk: 301 frames at 30 fps = 10.000 s, 29 joints"
    assert lines[1] == "first frame: base at [0.0, 0.0, 0.75] m, tilted 0 degrees from upright"
    assert lines[2].startswith("base speed: mean 0.40 m/s, max 0.40 m/s; fastest joint: ")
    assert lines[3].startswith("lowest point over the floor") and "ankle_roll_link" in lines[3]
    feet = lines[4].split("; ")  # each foot's height over the floor and its share of frames in the air
    assert [f.split(" min ")[0] for f in feet] == ["feet over the floor: left_ankle_roll_link", "right_ankle_roll_link"]
    assert all(" / median " in f and "above 2 cm" in f for f in feet), lines[4]
    assert lines[5] == "check: plausible (tilt, frame rate, speeds, joint ranges)"
    cut = tmp_path / "cut.csv"
    out = _tool(root, "trim", str(walk), "--seconds", "2:4", "--out", str(cut))
    assert out.returncode == 0 and out.stdout.splitlines()[0] == (
        f"frames 60 to 120 of {walk}: 61 frames = 2.000 s"), out.stdout + out.stderr
    rows = np.loadtxt(cut, delimiter=",")
    assert np.allclose(rows, lafan1_rows(frames=301)[60:121], atol=1e-8)  # the same numbers, the same columns
    npz = tmp_path / "cut.npz"
    assert _tool(root, "convert", str(cut), "--robot", "menagerie:unitree_g1", "--out", str(npz)).returncode == 0
    clip = formats.load(npz, ())  # our format names its joints
    assert clip.joint_names == G1_JOINTS and clip.frames == 61  # our format names the robot file's joints
    back = tmp_path / "back.csv"
    assert _tool(root, "convert", str(npz), "--out", str(back)).returncode == 0
    assert np.allclose(np.loadtxt(back, delimiter=","), rows, atol=1e-8)


def test_convert_to_mjlabs_motion_format_and_back(root, tmp_path):
    """Issue 47: convert between the formats read; mjlab's .npz (every body's pose from the robot file) is written
    too, and read back to the same clip."""
    import mujoco

    rows = lafan1_rows()
    walk = write_csv(tmp_path / "walk.csv", rows)
    out = tmp_path / "walk_mjlab.npz"
    done = _tool(root, "convert", str(walk), "--robot", "menagerie:unitree_g1", "--out", str(out), "--format", "mjlab")
    assert done.returncode == 0, done.stderr
    nbody = mujoco.MjModel.from_xml_string(g1_like_xml()).nbody
    with np.load(out) as z:
        assert z["body_pos_w"].shape == (61, nbody - 1, 3) and z["joint_vel"].shape == (61, 29)
        assert np.allclose(z["body_pos_w"][:, 0], rows[:, :3]) and float(z["fps"][0]) == 30.0
    clip = formats.load(out, G1_JOINTS)  # mjlab's reader: body 0 the base, joints in the file's order
    assert np.allclose(clip.joint_pos, rows[:, 7:]) and np.allclose(clip.base_quat, rows[:, [6, 3, 4, 5]])
    back = tmp_path / "back.csv"
    assert _tool(root, "convert", str(out), "--robot", "menagerie:unitree_g1", "--out", str(back)).returncode == 0
    assert np.allclose(np.loadtxt(back, delimiter=","), rows, atol=1e-8)
    bare = _tool(root, "convert", str(walk), "--out", str(out), "--format", "mjlab")
    assert bare.returncode == 2 and "--format mjlab needs --robot" in bare.stderr, bare.stderr


def test_inspect_names_a_mixed_up_quaternion_and_errors_are_one_line(root, tmp_path):
    rows = lafan1_rows()
    rows[:, 3:7] = rows[:, [6, 3, 4, 5]]  # w x y z where x y z w belongs
    mixed = write_csv(tmp_path / "mixed.csv", rows)
    out = _tool(root, "inspect", str(mixed), "--robot", "menagerie:unitree_g1")
    assert out.returncode == 0 and "tilted 180 degrees from upright" in out.stdout
    assert "likely a w x y z / x y z w mix-up" in out.stdout.splitlines()[-1]
    for args, expected in ((("trim", str(mixed), "--frames", "10:11", "--out", "x.csv"),
                            "--frames=10:11 keeps 1 frame(s) of the clip's 61"),
                           (("trim", str(mixed), "--seconds", "a:b", "--out", "x.csv"), "expected A:B"),
                           (("convert", str(mixed), "--out", "x.bvh"), "expected a file name ending in .npz"),
                           (("convert", str(mixed), "--out", "x.npz"), "names its joints and"),
                           (("inspect", str(tmp_path / "none.csv")), "does not exist (looked at ")):
        out = _tool(root, *args)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and expected in out.stderr, (
            args, out.stderr)


def test_frame_and_time_ranges():
    c = motion.Clip(30.0, ("a",), np.zeros((31, 3)), np.tile([1.0, 0, 0, 0], (31, 1)), np.zeros((31, 1)), "c")
    assert edit.frame_range(c, frames="5:") == (5, 31) and edit.frame_range(c, frames=":-1") == (0, 30)
    assert edit.frame_range(c, seconds="0.5:") == (15, 31) and edit.frame_range(c, seconds=":0.1") == (0, 4)


def test_the_lowest_point_of_a_tilted_capsule_is_exact_not_its_boxs_corner():
    """A capsule (radius 0.05, half-length 0.2) tilted 45 degrees with its centre at 0.5 m: its lowest point is
    0.5 - 0.2 sin 45 - 0.05 = 0.3086 m; its bounding box's lowest corner lies 0.021 m lower."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><freejoint/><geom type="capsule" size="0.05 0.2" euler="0 45 0"/></body>'
        "</worldbody></mujoco>")
    qpos = np.array([[0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0]])
    low, body = edit.lowest_points(model, qpos, [0])
    assert low[0] == pytest.approx(0.5 - 0.2 * np.sqrt(0.5) - 0.05, abs=1e-6) and body[0] == 1


def test_replay_writes_a_video_of_the_clip_on_the_robot(root, tmp_path):
    """``replay`` (issue 47, the clip command): the clip on the served G1-style robot, offscreen (MUJOCO_GL=egl, a
    software renderer on a CPU), drawn light: a video of the clip's frames that is not blank."""
    import imageio.v2 as imageio

    walk = write_csv(tmp_path / "walk.csv", lafan1_rows(frames=10))
    out = tmp_path / "walk.mp4"
    done = _tool(root, "replay", str(walk), "--robot", "menagerie:unitree_g1", "--out", str(out), "--size", "96x64",
                 "--quality", "light")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith(f"wrote {out}: 10 frames at 30 fps, 96x64, "), done.stdout
    frames = imageio.mimread(out)
    assert len(frames) == 10 and frames[0].shape[:2] == (64, 96) and frames[0].std() > 5.0
