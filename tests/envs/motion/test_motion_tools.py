"""Where clips come from: ``play.py --record-motion`` (a policy's rollout as a clip) and ``tools.keyframe_clip``
(splines between listed poses, the stance feet kept on the floor)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest

import play
from configs.catalog import get_task
from configs.quadruped import FLAT_QUADRUPED
from contract import motion
from contract.errors import UserError
from envs.motion.keyframes import SQUAT_WAVE, Key, Keyframes, key_table, lowest_point, make_clip, stance_geoms
from envs.motion.robot import build_tracking, every_joint_trained
from envs.robots.humanoid import HUMANOID
from envs.tasks.locomotion import LocomotionEnv
from rl_core.config_io import dump_yaml
from rl_core.runner import OnPolicyRunner


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    run = tmp_path_factory.mktemp("run")
    cfg = get_task("quadruped-flat").default_config()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native", episode_length_s=1.0),
                              runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=1,
                                                         device="cpu"),
                              algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    (run / "config.yaml").write_text(dump_yaml(cfg))
    OnPolicyRunner(LocomotionEnv(cfg.env, FLAT_QUADRUPED), cfg, task="quadruped-flat", run_dir=run, quiet=True).learn()
    return run


@pytest.fixture(scope="module")
def humanoid():
    return build_tracking(HUMANOID)


def test_play_records_a_rollout_as_a_clip(checkpoint, tmp_path, capsys):
    out = tmp_path / "trot.npz"
    code = play.main(["--checkpoint", str(checkpoint), "--episodes", "2", "--record-motion", str(out),
                      "--video-seconds", "0.5", "--command", "0.5", "0.0", "0.3", "--video-env", "1"])
    assert code == 0, capsys.readouterr().err
    clip = motion.from_bytes(out.read_bytes(), str(out))
    names = tuple(n for n in clip.joint_names)
    assert clip.fps == 50.0 and 2 <= clip.frames <= 25 and clip.name == "trot"
    assert len(names) == 12 and set(names) == {f"{leg}_{j}_joint" for leg in ("FR", "FL", "RR", "RL")
                                               for j in ("hip", "thigh", "calf")}
    assert 0.1 < clip.base_pos[:, 2].min() and np.allclose(np.linalg.norm(clip.base_quat, axis=1), 1.0)
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--record-motion", "x.mp4"], "--record_motion=x.mp4 is not allowed; expected a file name ending in .npz"),
    (["--record-motion", "x.npz", "--video-env", "9"], "--video-env=9 is not allowed; expected 0..1"),
])
def test_record_motion_bad_input_is_one_line(checkpoint, capsys, args, message):
    assert play.main(["--checkpoint", str(checkpoint), "--episodes", "2", *args]) == 2
    err = capsys.readouterr().err
    assert message.replace("--record_motion", "--record-motion") in err and err.count("\n") == 1


def test_every_joint_of_the_humanoid_is_trained_for_tracking(humanoid):
    spec = every_joint_trained(HUMANOID)
    assert spec.held == () and humanoid.num_held == 0 and humanoid.num_joints == 20
    assert humanoid.joint_names[12:] == tuple(f"{s}_{j}_joint" for s in ("left", "right")
                                              for j in ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow"))


def test_the_squat_wave_keeps_the_stance_feet_on_the_floor(humanoid):
    clip = make_clip(SQUAT_WAVE, humanoid)
    assert clip.fps == 50.0 and clip.frames == 476 and clip.joint_names == humanoid.joint_names
    times, angles, _ = key_table(SQUAT_WAVE, humanoid)
    for t, row in zip(times, angles, strict=True):  # the spline passes through every key
        assert np.allclose(clip.joint_pos[int(round(t * 50))], row)
    knee = humanoid.joint_names.index("left_knee_joint")
    assert clip.joint_pos[:, knee].max() == pytest.approx(1.4) and clip.base_pos[:, 2].min() < 0.8  # a squat
    model, data = humanoid.model, mujoco.MjData(humanoid.model)
    geoms = stance_geoms(SQUAT_WAVE, humanoid)
    b = humanoid.base_qpos_adr
    centres = []
    for f in range(0, clip.frames, 7):
        data.qpos[b:b + 3], data.qpos[b + 3:b + 7] = clip.base_pos[f], clip.base_quat[f]
        data.qpos[list(humanoid.joint_qpos_adr)] = clip.joint_pos[f]
        mujoco.mj_kinematics(model, data)
        assert abs(min(lowest_point(model, data, g) for g in geoms)) < 1e-9
        centres.append(data.geom_xpos[geoms, :2].mean(axis=0))
    assert np.abs(np.array(centres) - centres[0]).max() < 1e-9


def test_a_keyframe_naming_no_joint_or_bad_times_is_one_line(humanoid):
    with pytest.raises(UserError, match=r"^keyframe clip k: key at t=1 s: 'tail_joint' matches none of the robot"):
        make_clip(Keyframes("k", (Key(0.0), Key(1.0, (("tail_joint", 0.2),)))), humanoid)
    with pytest.raises(UserError, match=r"key times \[0\.0, 2\.0, 1\.0\] are not allowed"):
        make_clip(Keyframes("k", (Key(0.0), Key(2.0), Key(1.0))), humanoid)


ROOT = Path(__file__).resolve().parents[3]


def keyframe_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.keyframe_clip", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_the_keyframe_tool_writes_a_keys_file_clip(tmp_path):
    keys = tmp_path / "bow.yaml"
    keys.write_text("name: bow\nfps: 25\nkeys:\n  - {t: 0}\n  - {t: 1, pose: {'.*_hip_pitch_joint': -0.5}, "
                    "yaw: 0.3}\n")
    out = tmp_path / "bow.npz"
    proc = keyframe_tool("--keys", str(keys), "--out", str(out))
    assert proc.returncode == 0 and proc.stdout.startswith(f"wrote {out}: bow, 26 frames at 25 fps"), proc.stderr
    clip = motion.from_bytes(out.read_bytes(), str(out))
    assert clip.name == "bow" and clip.fps == 25.0 and clip.frames == 26
    assert 2 * np.arctan2(clip.base_quat[-1, 3], clip.base_quat[-1, 0]) == pytest.approx(0.3)
    proc = keyframe_tool("--preset", "cartwheel", "--out", str(out))
    assert proc.returncode == 2 and proc.stderr == ("error: --preset=cartwheel is not allowed; expected one of "
                                                    "squat_wave\n")
