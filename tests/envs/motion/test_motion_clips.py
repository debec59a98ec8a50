"""Motion clips as data (``contract/motion.py``, ``envs/motion/``): our .npz format round trip, Unitree's LAFAN1 CSV
and mjlab's .npz read into it, resampling to the control rate, replay on a G1-style humanoid built here (29
joints), and the one-line refusals (joints the robot lacks, a wrong frame rate, NaN, a quaternion that is not
unit)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from contract import motion
from contract.errors import UserError
from envs.motion import formats
from envs.motion.replay import replay
from envs.motion.resample import resample
from tests.robot_models import G1_JOINTS, g1_like_xml

FPS = 30.0
FRAMES = 61  # 2 s at 30 fps
YAW_RATE = 0.5  # rad/s
SPEED = 0.4  # m/s


def lafan1_rows(frames: int = FRAMES, joints: int = len(G1_JOINTS)) -> np.ndarray:
    """A LAFAN1-style table: walking forward at SPEED while turning at YAW_RATE, every joint a sine."""
    t = np.arange(frames) / FPS
    yaw = YAW_RATE * t
    quat_xyzw = np.stack([np.zeros_like(t), np.zeros_like(t), np.sin(yaw / 2), np.cos(yaw / 2)], axis=1)
    base = np.stack([SPEED * t, 0.1 * np.ones_like(t), 0.75 + 0.02 * np.sin(3 * t)], axis=1)
    angles = 0.3 * np.sin(2.0 * t[:, None] + np.arange(joints)[None, :] * 0.2)
    return np.concatenate([base, quat_xyzw, angles], axis=1)


def write_csv(tmp_path, rows: np.ndarray, name: str = "walk1_subject1.csv"):
    path = tmp_path / name
    np.savetxt(path, rows, delimiter=",", fmt="%.9f")
    return path


@pytest.fixture(scope="module")
def g1():
    return mujoco.MjModel.from_xml_string(g1_like_xml())


def test_a_lafan1_csv_loads_resamples_and_replays_on_a_g1_style_humanoid(tmp_path, g1):
    rows = lafan1_rows()
    clip = formats.load(write_csv(tmp_path, rows), G1_JOINTS)
    assert clip.fps == 30.0 and clip.frames == FRAMES and clip.joint_names == G1_JOINTS
    assert clip.name == "walk1_subject1"
    assert np.allclose(clip.base_quat[:, [1, 2, 3, 0]], rows[:, 3:7])  # x y z w -> w x y z
    at50 = resample(clip, 50.0)
    assert at50.frames == 101 and at50.fps == 50.0  # 2 s: frames 0..100 at 50 fps
    t = np.arange(at50.frames) / 50.0
    assert np.abs(at50.base_pos[:, 0] - SPEED * t).max() < 1e-9  # linear in time: exact
    yaw = 2 * np.arctan2(at50.base_quat[:, 3], at50.base_quat[:, 0])
    assert np.abs(yaw - YAW_RATE * t).max() < 1e-9  # slerp of a constant turn: exact
    assert np.abs(at50.joint_pos - 0.3 * np.sin(2.0 * t[:, None] + np.arange(29) * 0.2)).max() < 0.01
    pelvis, hand = g1.body("pelvis").id, g1.body("left_wrist_yaw_link").id
    ref = replay(g1, at50, (pelvis, hand), "clip")
    assert ref.qpos.shape == (101, g1.nq) and ref.qvel.shape == (101, g1.nv)
    assert np.allclose(ref.body_pos[:, 0], at50.base_pos) and np.allclose(ref.body_quat[:, 0], at50.base_quat)
    assert np.allclose(ref.body_lin_vel[10:-10, 0, 0], SPEED, atol=1e-6)
    assert np.allclose(ref.body_ang_vel[10:-10, 0], [0, 0, YAW_RATE], atol=1e-6)
    assert np.allclose(ref.qvel[10:-10, 3:6], [0, 0, YAW_RATE], atol=1e-6)  # base frame: a pure yaw turn
    knee = g1.joint("left_knee_joint")
    expected = 0.6 * np.cos(2.0 * t + 3 * 0.2)
    assert np.abs(ref.qvel[5:-5, knee.dofadr[0]] - expected[5:-5]).max() < 0.02
    data = mujoco.MjData(g1)  # the hand's pose is MuJoCo's forward kinematics of the frame
    data.qpos[:] = ref.qpos[40]
    mujoco.mj_kinematics(g1, data)
    assert np.allclose(ref.body_pos[40, 1], data.xpos[hand]) and np.allclose(ref.body_quat[40, 1], data.xquat[hand])


def test_a_mismatched_joint_list_is_one_line(tmp_path, g1):
    short = write_csv(tmp_path, lafan1_rows(joints=28), "short.csv")
    with pytest.raises(UserError) as e:
        formats.load(short, G1_JOINTS)
    assert "\n" not in str(e.value)
    assert str(e.value).startswith(f"motion clip {short}: 28 joint columns, but the robot has 29 joints")
    renamed = motion.Clip(30.0, ("left_hip_pitch", *G1_JOINTS[1:]), np.zeros((3, 3)), np.tile([1.0, 0, 0, 0], (3, 1)),
                          np.zeros((3, 29)), "renamed")
    with pytest.raises(UserError, match=r"^clip: the robot has no joint\(s\) left_hip_pitch of the clip; its "
                                        r"joints: left_hip_pitch_joint, ") as e:
        replay(g1, renamed, (), "clip")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("change, message", [
    (lambda r: r.__setitem__((7, 7 + 12), np.nan), r"joint_pos is not finite at frame 7 \(joint waist_yaw_joint\)"),
    (lambda r: r.__setitem__((4, 6), 3.0), r"base_quat at frame 4 has norm 3\.\d+, not 1"),
])
def test_nan_and_a_quaternion_that_is_not_unit_are_one_line(tmp_path, change, message):
    rows = lafan1_rows()
    change(rows)
    with pytest.raises(UserError, match=message) as e:
        formats.load(write_csv(tmp_path, rows), G1_JOINTS)
    assert "\n" not in str(e.value)


def test_a_wrong_frame_rate_is_one_line(tmp_path):
    with pytest.raises(UserError, match=r"frame rate fps=0\.0 is not allowed; expected a number > 0"):
        formats.load(write_csv(tmp_path, lafan1_rows()), G1_JOINTS, csv_fps=0.0)
    clip = formats.load(write_csv(tmp_path, lafan1_rows()), G1_JOINTS)
    with pytest.raises(UserError, match=r"cannot resample to fps=-50\.0"):
        resample(clip, -50.0)
    path = tmp_path / "bad_fps.npz"
    np.savez(path, **{**_npz_arrays(clip), "fps": np.array(np.inf)})
    with pytest.raises(UserError, match=r"bad_fps\.npz: frame rate fps=inf is not allowed"):
        formats.load(path, G1_JOINTS)


def _npz_arrays(clip: motion.Clip) -> dict:
    with np.load(__import__("io").BytesIO(motion.to_bytes(clip))) as z:
        return {k: z[k] for k in z.files}


def test_our_npz_round_trips_and_its_hash_is_the_content(tmp_path):
    clip = formats.load(write_csv(tmp_path, lafan1_rows()), G1_JOINTS)
    path = motion.save(clip, tmp_path / "clip.npz")
    back = formats.load(path, ())  # our format names its joints: the robot's order is not needed
    assert back.joint_names == clip.joint_names and back.fps == clip.fps and back.name == clip.name
    assert np.array_equal(back.joint_pos, clip.joint_pos) and np.array_equal(back.base_quat, clip.base_quat)
    assert motion.digest(back) == motion.digest(clip)
    assert motion.digest(resample(clip, 50.0)) != motion.digest(clip)
    with pytest.raises(UserError, match=r"format='other/1' is not a legged-mjx motion clip"):
        motion.from_arrays({**_npz_arrays(clip), "format": np.array("other/1")}, "x.npz")


def test_mjlab_npz_reads_its_root_body_and_joint_columns(tmp_path, g1):
    clip = formats.load(write_csv(tmp_path, lafan1_rows()), G1_JOINTS)
    ref = replay(g1, clip, tuple(range(1, g1.nbody)), "clip")
    path = tmp_path / "dance.npz"
    np.savez(path, fps=np.array([30]), joint_pos=clip.joint_pos, joint_vel=np.zeros_like(clip.joint_pos),
             body_pos_w=ref.body_pos, body_quat_w=ref.body_quat, body_lin_vel_w=ref.body_lin_vel,
             body_ang_vel_w=ref.body_ang_vel)
    back = formats.load(path, G1_JOINTS)
    assert back.fps == 30.0 and back.name == "dance" and back.joint_names == G1_JOINTS
    assert np.allclose(back.base_pos, clip.base_pos) and np.allclose(back.base_quat, clip.base_quat)
    with pytest.raises(UserError, match=r"dance\.npz: 29 joint columns, but the robot has 12 joints"):
        formats.load(path, G1_JOINTS[:12])


def test_finite_differences_of_a_turn_recover_its_rates():
    t = np.arange(50) / 50.0
    quat = np.stack([np.cos(0.3 * t), np.sin(0.3 * t), 0 * t, 0 * t], axis=1)  # 0.6 rad/s about x
    w = motion.angular_velocity(quat, 1 / 50.0)
    assert np.allclose(w, [0.6, 0, 0], atol=1e-9)
    assert np.allclose(motion.derivative(t ** 2, 1 / 50.0)[1:-1], 2 * t[1:-1])
