"""Motion tracking for robots as they come (issue 47): ``menagerie:NAME:track`` and ``path/to/robot.py:track``
with ``env.clips=[...]`` on a drafted 29-joint G1-style humanoid (tests/robot_models.py) served by name through
``MENAGERIE_ROOT``, and a LAFAN1 CSV written here: held and welded joints trained where the clip moves them, the
torso as anchor, clip paths beside the robot file, and the plausibility checks' one-line refusals."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from configs import menagerie as menagerie_config
from configs.catalog import get_task
from contract.errors import UserError
from envs.motion.robot import build_tracking, every_joint_trained
from envs.robots.draft import draft
from envs.robots.menagerie import files_digest, parse, xml_path
from envs.tasks.track import TrackEnv, TrackEnvConfig
from tests.robot_models import G1_JOINTS, g1_like_xml

pytest.importorskip("mujoco_menagerie")
TASK = "menagerie:unitree_g1:track"
WRISTS = tuple(n for n in G1_JOINTS if "wrist" in n)


def lafan1_rows(frames: int = 61, omega: float = 2.0) -> np.ndarray:
    """A LAFAN1-style table of the G1's 29 joints at 30 fps: walking forward at 0.4 m/s, every joint a sine of
    0.3 rad at ``omega`` rad/s."""
    t = np.arange(frames) / 30.0
    quat_xyzw = np.stack([0 * t, 0 * t, np.sin(0.25 * t), np.cos(0.25 * t)], axis=1)
    base = np.stack([0.4 * t, 0 * t, 0.75 + 0.01 * np.sin(3 * t)], axis=1)
    angles = 0.3 * np.sin(omega * t[:, None] + np.arange(len(G1_JOINTS))[None, :] * 0.2)
    return np.concatenate([base, quat_xyzw, angles], axis=1)


def write_csv(path: Path, rows: np.ndarray) -> Path:
    np.savetxt(path, rows, delimiter=",", fmt="%.9f")
    return path


@pytest.fixture
def served(tmp_path, monkeypatch):
    """``unitree_g1`` served as the G1-style test model (drafted: legs trained, waist and arms held, wrists
    welded, ``".*": 0.0`` as default pose), the fix cache seeded with the draft's own gains."""
    from envs import registry

    for name in [n for n in registry.registered_so_far() if n.startswith("menagerie:")]:
        monkeypatch.delitem(registry._REGISTRY, name)
    folder = tmp_path / "menagerie" / "unitree_g1"
    folder.mkdir(parents=True)
    (folder / "g1.xml").write_text(g1_like_xml())
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path / "menagerie"))
    monkeypatch.setenv("LEGGED_MJX_CACHE", str(tmp_path / "cache"))
    ref = parse(TASK)
    spec = draft(xml_path(ref), "unitree_g1").spec
    cached = menagerie_config.cache_dir() / f"unitree_g1-{files_digest(ref)[:16]}-v{menagerie_config.FIX_VERSION}.json"
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps({"actuators": [dataclasses.asdict(g) for g in spec.actuators],
                                  "sim": dataclasses.asdict(spec.sim), "verdict": "OK", "changes": [], "seconds": 0}))
    return spec


def _env(task, tmp_path, rows=None, **fields) -> TrackEnvConfig:
    clip = write_csv(tmp_path / "walk.csv", lafan1_rows() if rows is None else rows)
    return dataclasses.replace(task.default_config().env, clips=(str(clip),), num_envs=2, **fields)


def test_the_drafted_g1_with_its_broad_default_pose_builds_for_tracking(served):
    assert served.held and served.welded  # the draft holds the waist and arms, welds the wrists
    broad = dataclasses.replace(served, default_pose=((".*", 0.0),))  # the draft's pose of a straight-legged file
    spec = every_joint_trained(broad)  # was: "joint 'waist_yaw_joint' is matched by 2 entries"
    assert len(spec.default_pose) == 23 and spec.held == ()
    robot = build_tracking(broad, release=WRISTS)
    assert robot.num_joints == 29 and set(robot.joint_names) == set(G1_JOINTS)
    assert robot.welded_joint_names == ()


def test_a_robot_by_name_tracks_with_the_wide_anchor_kernel_and_humanoid_track_keeps_mjlab_s(served):
    """A drafted robot's tracking task weighs the anchor's position 2.0 on a (1 m)^2 kernel (configs/track.py
    DRAFTED_TRACK_ENV: with mjlab's 0.5 on (0.3 m)^2 the G1-style model stood still on a walk); the built-in
    humanoid-track keeps mjlab's."""
    drafted, builtin = get_task(TASK).default_config().env, get_task("humanoid-track").default_config().env
    assert isinstance(drafted, TrackEnvConfig) and isinstance(builtin, TrackEnvConfig)
    assert (drafted.rewards.anchor_pos, drafted.reward_params.anchor_pos) == (2.0, 1.0)
    assert (builtin.rewards.anchor_pos, builtin.reward_params.anchor_pos) == (0.5, 0.09)
    assert dataclasses.replace(drafted.rewards, anchor_pos=0.5) == builtin.rewards


def test_a_robot_by_name_tracks_a_29_column_csv(served, tmp_path, capsys):
    task = get_task(TASK)
    env_cfg = _env(task, tmp_path)
    task.validate(env_cfg)
    out = capsys.readouterr().out
    assert "6 welded joint(s) released and trained, the clips move them (left_wrist_roll_joint" in out, out
    assert "11 held joint(s) trained (waist_yaw_joint" in out, out
    env = task.make_env(env_cfg, "cpu")
    try:
        assert env.num_joints == 29
        assert env.model.body(env.body_ids[env.columns.anchor]).name == "torso_link"  # the rule: torso_link
    finally:
        env.close()
    pelvis = TrackEnv(dataclasses.replace(env_cfg, anchor_body="pelvis"), served, "cpu")  # overridable
    try:
        assert pelvis.model.body(pelvis.body_ids[pelvis.columns.anchor]).name == "pelvis"
    finally:
        pelvis.close()


def test_welded_joints_kept_welded_are_one_line_saying_how_to_release_them(served, tmp_path):
    task = get_task(TASK)
    with pytest.raises(UserError) as e:
        task.validate(_env(task, tmp_path, release_welded=False))
    text = str(e.value)
    assert "\n" not in text and "moves 6 joint(s) that robot unitree_g1's spec welds (left_wrist_roll_joint" in text
    assert "env.release_welded=true" in text and "welded=" in text, text
    still = lafan1_rows()
    still[:, [7 + G1_JOINTS.index(n) for n in WRISTS]] = 0.0  # held at the welded pose: welded, column left out
    env_cfg = _env(task, tmp_path, rows=still)
    task.validate(env_cfg)
    env = task.make_env(env_cfg, "cpu")
    assert env.num_joints == 23
    env.close()


def test_a_robot_file_without_a_track_task_and_clips_beside_it(served, tmp_path, monkeypatch):
    folder = tmp_path / "robot"
    folder.mkdir()
    (folder / "g1.xml").write_text(g1_like_xml())
    write_csv(folder / "walk.csv", lafan1_rows())
    (folder / "g1.py").write_text(
        "from pathlib import Path\nfrom configs.track import track_task\nfrom envs.robots.spec import *\n"
        "from envs.tasks.track import TrackEnvConfig\n"
        f"G1 = {served!r}\n".replace(repr(served.mjcf), "Path(__file__).with_name('g1.xml')") +
        "dance = track_task('g1-dance', G1, TrackEnvConfig(clips=('walk.csv',)))\n"
        "missing = track_task('g1-missing', G1, TrackEnvConfig(clips=('nowhere.csv',)))\n")
    monkeypatch.chdir(tmp_path)  # not the file's folder
    bare = get_task("robot/g1.py:track")  # no `track` in the file: its one RobotSpec's tracking task
    bare.validate(_env(bare, tmp_path))
    dance = get_task("robot/g1.py:dance")
    assert dance.default_config().env.clips == (str((folder / "walk.csv").resolve()),)
    dance.validate(dataclasses.replace(dance.default_config().env, num_envs=2))
    with pytest.raises(UserError) as e:
        get_task("robot/g1.py:missing").validate(get_task("robot/g1.py:missing").default_config().env)
    assert f"looked at {(folder / 'nowhere.csv').resolve()}" in str(e.value) and "that file's folder" in str(e.value)


@pytest.mark.parametrize("change, expected", [
    ("wxyz", "tilted 180 degrees from upright (quaternion [0.0, 1.0, 0.0, 0.0] as w x y z); likely a w x y z / "
             "x y z w mix-up"),
    ("fps120", "rad/s, above the robot's 60 rad/s; the frame rate is likely wrong (120 frames/s; a .csv clip's is "
               "env.csv_fps=120, Unitree's LAFAN1 files are 30)"),
    ("fps0", "0.001 frames/s (61 frames = 6e+04 s) is not a motion capture rate (1 to 2000)"),
    ("range", "joint left_knee_joint is at 3.000 at frame 0, outside its range [-2.500, 2.500]"),
])
def test_implausible_clips_are_one_line_before_training(served, tmp_path, change, expected):
    task = get_task(TASK)
    rows, fields = lafan1_rows(omega=60.0 if change == "fps120" else 2.0), {}  # 18 rad/s at 30 fps, 72 at 120
    if change == "wxyz":  # w x y z written where x y z w belongs: an upright base turns upside down
        rows[:, 3:7] = rows[:, [6, 3, 4, 5]]
    elif change == "range":
        rows[:, 7 + G1_JOINTS.index("left_knee_joint")] = 3.0
    else:
        fields["csv_fps"] = 120.0 if change == "fps120" else 0.001
    with pytest.raises(UserError) as e:
        task.validate(_env(task, tmp_path, rows, **fields))
    assert "\n" not in str(e.value) and expected in str(e.value), str(e.value)
    if change != "fps0":
        task.validate(_env(task, tmp_path, rows, check_clips=False, **fields))  # the way out the line gives


@pytest.mark.slow
def test_train_play_export_and_sim2sim_of_a_robot_by_name_with_a_csv(served, tmp_path, capsys):
    """The issue's command with no spec file: train.py --task menagerie:unitree_g1:track env.clips=[walk.csv],
    then play.py's evaluation and ONNX export, and sim2sim from the file alone."""
    import play
    import train
    from deploy.onnx_policy import OnnxPolicy

    clip = write_csv(tmp_path / "walk.csv", lafan1_rows(frames=121))
    run, onnx_file = tmp_path / "run", tmp_path / "g1.onnx"
    assert train.main(["--task", TASK, f"env.clips=[{clip}]", "--seed", "1", "--num-envs", "32",
                       "--max-iterations", "2", "--run-dir", str(run), "--quiet"]) == 0
    assert "6 welded joint(s) released and trained" in capsys.readouterr().out
    assert play.main(["--checkpoint", str(run), "--episodes", "2", "--export-onnx", str(onnx_file)]) == 0
    meta = OnnxPolicy(onnx_file).metadata
    assert meta["task"] == TASK and len(meta["joint_names"]) == 29 and meta["motion"]["anchor_body"] == "torso_link"
    assert play.main(["--sim2sim", str(onnx_file), "--episodes", "1"]) == 0


def test_the_file_new_robot_drafts_tracks_with_or_without_a_track_line(served, tmp_path):
    """The issue's path: ``python -m tools.new_robot menagerie:unitree_g1 --out g1.py``, then ``g1.py:track`` as
    it is (no track task in it) and with docs/motion.md's ``track_task`` line added."""
    import os
    import subprocess
    import sys

    out = tmp_path / "g1.py"
    done = subprocess.run([sys.executable, "-m", "tools.new_robot", "menagerie:unitree_g1", "--out", str(out)],
                          cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    clip = write_csv(tmp_path / "walk.csv", lafan1_rows())
    bare = get_task(f"{out}:track")
    bare.validate(dataclasses.replace(bare.default_config().env, clips=(str(clip),)))
    spec_name = next(line.split(" = ")[0] for line in out.read_text().splitlines() if " = RobotSpec(" in line)
    mine = tmp_path / "g1_mine.py"
    mine.write_text(out.read_text() + "\nfrom configs.track import track_task\nfrom envs.tasks.track import "
                    f"TrackEnvConfig\n\ntrack = track_task('g1-walk', {spec_name}, "
                    "TrackEnvConfig(clips=('walk.csv',)))\n")
    task = get_task(f"{mine}:track")
    assert task.default_config().env.clips == (str(clip.resolve()),)  # beside the file
    task.validate(task.default_config().env)
