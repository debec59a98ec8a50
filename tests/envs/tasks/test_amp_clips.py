"""AMP clips as users have them (issue 47, points 3 and 8 on the AMP path): a LAFAN1 CSV of a 29-joint G1-style
humanoid (written here) on its draft, which welds the 6 wrists: the welded columns are left out (one line when the
clip moves them), and an implausible clip is one line before training (``env.amp_check_clips=false`` uses it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mujoco
import numpy as np
import pytest
import torch

from configs.humanoid import HUMANOID_ENV
from contract.errors import UserError
from envs.robots.draft import draft
from envs.tasks.locomotion import LocomotionEnv

ROOT = Path(__file__).resolve().parents[3]
G1 = ROOT / "examples" / "g1_like" / "g1_like.xml"
"""The G1-style model written as mjlab's file (29 joints, no actuators, no keyframe)."""


def lafan1_rows(frames: int = 61) -> np.ndarray:
    """A LAFAN1-style table of the file's joints at 30 fps: walking forward at 0.4 m/s, every joint a sine of
    0.1 rad around the middle of its range (the wrists, welded by the draft, move too)."""
    m = mujoco.MjModel.from_xml_path(str(G1))
    hinges = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    mid = np.array([m.jnt_range[j].mean() for j in hinges])
    t = np.arange(frames) / 30.0
    quat_xyzw = np.stack([0 * t, 0 * t, np.sin(0.25 * t), np.cos(0.25 * t)], axis=1)
    base = np.stack([0.4 * t, 0 * t, 0.75 + 0.01 * np.sin(3 * t)], axis=1)
    angles = mid[None, :] + 0.1 * np.sin(2.0 * t[:, None] + np.arange(len(hinges))[None, :] * 0.2)
    return np.concatenate([base, quat_xyzw, angles], axis=1)


@pytest.fixture(scope="module")
def g1():
    return draft(G1, "g1").spec


def _env(spec, path: Path, **fields) -> LocomotionEnv:
    cfg = dataclasses.replace(HUMANOID_ENV, num_envs=2, backend="native", amp_clips=(str(path),), **fields)
    return LocomotionEnv(cfg, spec)


def test_a_29_column_csv_on_the_draft_that_welds_the_wrists(g1, tmp_path, capsys):
    assert g1.welded  # the draft welds the 6 wrist joints
    path = tmp_path / "walk.csv"
    np.savetxt(path, lafan1_rows(), delimiter=",", fmt="%.9f")
    env = _env(g1, path)  # was: "29 joint columns, but the robot has 23 joints"
    try:
        line = capsys.readouterr().out
        assert "the clip moves 6 joint(s) that robot g1's spec welds (left_wrist_roll_joint" in line, line
        assert "left out of the AMP reference" in line and line.count("\n") == 1, line
        s, s_next = env.amp_reference(32, torch.Generator().manual_seed(0))
        assert s.shape == s_next.shape == (32, env.amp_obs_dim) and torch.isfinite(s).all()
    finally:
        env.close()


@pytest.mark.parametrize("change, expected", [
    ("wxyz", "likely a w x y z / x y z w mix-up"),
    ("fast", "faster than any human (12.5 m/s); the frame rate is likely wrong"),
    ("range", "joint left_knee_joint is at 3.000 at frame 0, outside its range"),
])
def test_an_implausible_amp_clip_is_one_line_and_the_flag_uses_it_anyway(g1, tmp_path, change, expected):
    rows = lafan1_rows()
    if change == "wxyz":  # w x y z written where x y z w belongs: the upright base turns upside down
        rows[:, 3:7] = rows[:, [6, 3, 4, 5]]
    elif change == "fast":  # 14 m/s: a clip played too fast
        rows[:, 0] *= 35.0
    else:
        rows[:, 7 + 3] = 3.0  # left_knee_joint, the file's fourth joint
    path = tmp_path / "bad.csv"
    np.savetxt(path, rows, delimiter=",", fmt="%.9f")
    with pytest.raises(UserError) as e:
        _env(g1, path)
    text = str(e.value)
    assert "\n" not in text and expected in text and text.endswith("env.amp_check_clips=false uses it anyway"), text
    _env(g1, path, amp_check_clips=False).close()


def test_amp_clip_paths_in_a_robot_file_are_relative_to_its_folder(tmp_path, monkeypatch):
    """Issue 47, point 5 on the AMP path: ``env.amp_clips`` written in a robot file name files beside it, whatever
    the current directory (each task kind of the file); the command line's stay relative to the current one."""
    from configs.catalog import get_task

    folder = tmp_path / "robot"
    folder.mkdir()
    (folder / "q.py").write_text(
        "from configs.locomotion import blind_task, flat_task, rough_task\n"
        "from envs.robots.quadruped import QUADRUPED\nfrom envs.tasks.locomotion.config import LocomotionEnvConfig\n"
        "ENV = LocomotionEnvConfig(amp_clips=('trot.npz', '/abs/run.npz'))\n"
        "flat = flat_task('q-amp-flat', QUADRUPED, ENV)\nrough = rough_task('q-amp-rough', QUADRUPED, ENV)\n"
        "blind = blind_task('q-amp-blind', QUADRUPED, ENV)\n")
    monkeypatch.chdir(tmp_path)  # not the file's folder
    beside = (str((folder / "trot.npz").resolve()), "/abs/run.npz")
    for kind in ("flat", "rough", "blind"):
        task = get_task(f"robot/q.py:{kind}")
        assert task.default_config().env.amp_clips == beside, kind
    cfg = dataclasses.replace(get_task("robot/q.py:flat").default_config().env, num_envs=2, backend="native")
    with pytest.raises(UserError, match=f"looked at {folder.resolve() / 'trot.npz'}"):
        get_task("robot/q.py:flat").make_env(cfg, torch.device("cpu"))


def test_the_frame_rate_of_an_amp_csv_is_a_setting_and_a_wrong_one_names_it(g1, tmp_path):
    path = tmp_path / "walk.csv"
    np.savetxt(path, lafan1_rows(), delimiter=",", fmt="%.9f")  # 61 frames: 2 s at 30 fps, 4 s at 15
    sizes = []
    for fps in (30.0, 15.0):
        env = _env(g1, path, amp_csv_fps=fps)
        sizes.append(env.amp_reference.__self__.first.shape[0])  # type: ignore[attr-defined]
        env.close()
    assert sizes[1] == pytest.approx(2 * sizes[0], abs=2), sizes  # control-rate transitions of a 2x longer clip
    with pytest.raises(UserError, match=r"the frame rate is likely wrong \(a \.csv clip's is env\.amp_csv_fps=0\.001"):
        _env(g1, path, amp_csv_fps=0.001)
