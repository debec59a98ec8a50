"""tests/walk_clip.py, the G1-style model's walking clip that issue 47's tracking run trains on: its feet stand
still on the floor while they carry the robot, swing clear, and the clip tool calls it plausible."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from tests.walk_clip import FEET, FPS, XML, Gait, main, walk_rows


@pytest.fixture(scope="module")
def walk():
    rows, worst = walk_rows(seconds=3.0)
    return rows, worst


def _feet_over_frames(rows: np.ndarray) -> np.ndarray:
    """The foot bodies' positions (frames x 2 x 3) replayed from the rows, and each sole's lowest point."""
    m = mujoco.MjModel.from_xml_path(str(XML))
    d = mujoco.MjData(m)
    hinges = [m.jnt_qposadr[j] for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    out = np.zeros((len(rows), 2, 4))
    for i, r in enumerate(rows):
        d.qpos[:3], d.qpos[3:7] = r[:3], [r[6], r[3], r[4], r[5]]  # x y z w -> w x y z
        d.qpos[hinges] = r[7:]
        mujoco.mj_kinematics(m, d)
        for s, name in enumerate(FEET):
            b = m.body(name).id
            soles = [g for g in range(m.ngeom) if m.geom_bodyid[g] == b and m.geom_contype[g]]
            out[i, s, :3] = d.xpos[b]
            out[i, s, 3] = min(d.geom_xpos[g][2] - m.geom_size[g][0] for g in soles)
    return out


def test_the_feet_carry_the_robot_without_sliding_and_swing_clear(walk):
    rows, worst = walk
    assert rows.shape == (90, 7 + 29) and worst < 1e-3
    feet = _feet_over_frames(rows)
    lowest = feet[:, :, 3]
    assert np.abs(lowest.min(axis=1)).max() < 2e-3  # some foot on the floor in every frame, none below it
    standing = lowest < 1e-3
    for s in (0, 1):  # a standing foot does not move between consecutive standing frames
        both = standing[1:, s] & standing[:-1, s]
        assert np.abs(np.diff(feet[:, s, :2], axis=0))[both].max() < 1e-3
    assert lowest.max() > Gait().lift * 0.9  # the swing foot clears the floor
    assert 0.25 < (~standing).mean() < 0.5  # each foot swings under half the time, never both at once
    assert not (~standing).all(axis=1).any()


def test_the_robot_walks_forward_at_the_speed_asked(walk):
    rows, _ = walk
    assert rows[-1, 0] == pytest.approx(Gait().speed * (len(rows) - 1) / FPS)
    assert np.allclose(rows[:, 3:7], [0, 0, 0, 1])  # upright, facing forward (x y z w)


def test_the_command_writes_a_csv_the_clip_tool_accepts(tmp_path):
    from tests.envs.motion.test_clip_tool import _tool
    from tests.menagerie_models import menagerie_root

    out = tmp_path / "walk.csv"
    assert main([str(out), "--seconds", "2"]) == 0
    assert np.loadtxt(out, delimiter=",").shape == (60, 36)
    r = _tool(menagerie_root(tmp_path / "menagerie"), "inspect", str(out), "--robot", "menagerie:unitree_g1@g1_mjlab")
    assert r.returncode == 0 and "check: plausible" in r.stdout, r.stderr
