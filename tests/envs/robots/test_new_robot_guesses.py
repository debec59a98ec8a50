"""Issue 46, point 7: a draft says what it guessed (no keyframe, a missing actuator, no actuators, effort limits),
in its summary line and in the drafted file's docstring; a file without a keyframe stands on bent knees; effort
limits are per joint (the file's ``actuatorfrcrange``, else its armature: one guess per motor size, never one for
the whole humanoid); the standing height is measured from the feet's lowest points, not their bounding boxes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import mujoco
import pytest

from envs.robot_check.band import MAKERS, band
from envs.robots.draft import draft
from envs.robots.draft_gains import HOLD, HOLD_DAMPING
from envs.robots.draft_source import fit_lines
from tests.robot_models import write

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
G1 = EXAMPLES / "g1_like" / "g1_like.xml"


def _without_keyframe(name: str) -> str:
    return re.sub(r"<keyframe>.*</keyframe>", "", (EXAMPLES / name / f"{name}.xml").read_text(), flags=re.S)


def _pose(d) -> dict[str, float]:
    return {rx: v for rx, v in d.spec.default_pose}


def _groups(d) -> dict[str, float]:
    return {g.group.joints: g.group.effort_limit for g in d.groups}


def test_the_g1_like_model_is_written_as_mjlabs_g1_file():
    m = mujoco.MjModel.from_xml_path(str(G1))
    assert (m.njnt, m.nu, m.nkey) == (30, 0, 0)  # 29 hinges and the free joint; no actuators, no keyframe
    assert 34 < sum(m.body_mass) < 36
    efforts = sorted({float(x) for x in m.jnt_actfrcrange[1:, 1]})
    assert efforts == [5.0, 25.0, 50.0, 88.0, 139.0] and (m.dof_armature[6:] > 0).all()


def test_no_keyframe_bends_the_knees_of_a_biped_as_mjlab_does(tmp_path):
    d = draft(G1, "g1")
    pose = _pose(d)
    assert pose[".*_knee_joint"] == pytest.approx(0.3, abs=0.01)
    assert pose[".*_hip_pitch_joint|.*_ankle_pitch_joint"] == pytest.approx(-0.15, abs=0.01)
    assert d.keyframe == "" and any("no keyframe" in g for g in d.guesses)
    assert "GUESSED: the file has no keyframe" in d.notes["default_pose"]


def test_no_keyframe_on_a_quadruped_gives_legged_gyms_anymal_pose(tmp_path):
    """anymal_like without its keyframe: the drafted pose is its home keyframe (HFE +-0.4, KFE -+0.8), the knees'
    directions from their ranges."""
    with_key = draft(EXAMPLES / "anymal_like" / "anymal_like.xml", "a")
    without = draft(write(tmp_path, "a.xml", _without_keyframe("anymal_like")), "a")
    expected = dict(with_key.spec.default_pose)
    assert dict(without.spec.default_pose) == pytest.approx(expected, abs=0.01)
    assert without.spec.base_height == pytest.approx(with_key.spec.base_height, abs=0.01)


def test_no_keyframe_and_no_knee_asks_for_a_pose(tmp_path):
    text = _without_keyframe("anymal_like").replace("_KFE", "_LOWER")
    with pytest.raises(Exception, match=r"has no joint named knee: add a standing keyframe"):
        draft(write(tmp_path, "a.xml", text), "a")


def test_effort_limits_are_per_joint_never_one_guess_for_a_humanoid(tmp_path):
    assert sorted(set(_groups(draft(G1, "g1")).values())) == [25.0, 50.0, 88.0, 139.0]  # the file's frcranges
    bare = write(tmp_path, "g1.xml", re.sub(r' actuatorfrcrange="[^"]*"', "", G1.read_text()))
    d = draft(bare, "g1")
    efforts = _groups(d)
    assert len(set(efforts.values())) == 4, efforts  # one guess per motor size (armature)
    assert efforts[".*_hip_roll_joint|.*_knee_joint"] == pytest.approx(139, rel=0.05)
    assert all("effort limit guessed from the file's armature" in g.note for g in d.groups)
    assert any(g.startswith("effort limit guessed on") for g in d.guesses)


def test_a_missing_actuator_takes_its_twins_values(tmp_path):
    text = (EXAMPLES / "go_like" / "go_like.xml").read_text()
    line = '    <motor class="knee" name="FL_calf" joint="FL_calf_joint"/>\n'
    assert line in text
    text = text.replace(line, "").replace('ctrl="0 0 0 0 0 0 0 0 0 0 0 0"', 'ctrl="0 0 0 0 0 0 0 0 0 0 0"')
    d = draft(write(tmp_path, "go.xml", text), "go")
    (group,) = [g for g in d.groups if "missing actuator" in g.note]
    assert group.group.joints == "FL_calf_joint" and "its twin FR_calf_joint's values" in group.note
    calves = [g for g in d.groups if "FR_calf_joint" in g.group.joints or "RL_calf" in g.group.joints]
    assert group.group.effort_limit == calves[0].group.effort_limit == 45.4
    assert d.mirror_pairs and any("missing actuator on FL_calf_joint" in g for g in d.guesses)


def test_the_summary_line_and_the_docstring_say_what_was_guessed(tmp_path):
    out = tmp_path / "g1.py"
    result = subprocess.run([sys.executable, "-m", "tools.new_robot", str(G1), "--out", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "GUESSED: no keyframe: knees bent 0.30 rad" in result.stdout
    assert "no actuators in the file" in result.stdout
    text = out.read_text()
    assert "Guessed (the file does not say):\n- no keyframe" in text.split('"""')[1]
    assert max(len(line) for line in text.splitlines()) <= 120


def test_the_standing_height_comes_from_the_feet_s_lowest_points():
    """go_like's foot spheres: the drafted base height is the base's height over the spheres' bottoms (+ the
    drop), not over their rotated bounding boxes' corners."""
    path = EXAMPLES / "go_like" / "go_like.xml"
    m = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, data, 0)
    mujoco.mj_forward(m, data)
    feet = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, n) for n in ("FL", "FR", "RL", "RR")]
    bottom = min(data.geom_xpos[g][2] - m.geom_size[g][0] for g in feet)
    assert draft(path, "go").spec.base_height == pytest.approx(round(data.qpos[2] - bottom + 0.02, 2))


def test_long_lines_are_split_inside_their_string():
    line = '        HeldJoints(joints="' + "|".join(f"joint_number_{k}" for k in range(12)) + '"),\n'
    out = fit_lines(line)
    assert max(len(x) for x in out.splitlines()) <= 120 and len(out.splitlines()) > 1
    assert eval(out.strip().rstrip(","), {"HeldJoints": lambda joints: joints}) == line.split('"')[1]


def _carried(m: mujoco.MjModel, joint: str) -> float:
    """M g r of ``joint`` at the file's reference pose (the G1-style draft holds its waist and arms there), summed
    body by body: every body below the joint's, its mass and centre."""
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    j = m.joint(joint)
    top = int(j.bodyid[0])
    below = [b for b in range(m.nbody) if top in _ancestors(m, b)]
    mass = sum(float(m.body_mass[b]) for b in below)
    centre = sum(float(m.body_mass[b]) * d.xipos[b] for b in below) / mass
    return mass * 9.81 * float(((centre - d.xanchor[j.id]) ** 2).sum() ** 0.5)


def _ancestors(m: mujoco.MjModel, b: int) -> list[int]:
    out = [b]
    while b:
        b = int(m.body_parentid[b])
        out.append(b)
    return out


def test_held_joints_hold_what_they_carry_the_g1_waist_and_not_its_arms():
    """Issue 46: the G1-style model's waist (50 N m roll / pitch, 88 N m yaw) carries 16.7 kg at 0.17-0.21 m: held
    at HOLD x M g r (138 / 174, beside Unitree's 150), the motors' effort limits kept; its arms' M g r x 5 stays
    under 1 x their 25 N m limit, so they keep the draft's kp 25. kd: critically damped (the next test)."""
    m = mujoco.MjModel.from_xml_path(str(G1))
    d = draft(G1, "g1")
    groups = {g.group.joints: g for g in d.groups}
    roll_pitch, yaw = groups["waist_roll_joint|waist_pitch_joint"], groups["waist_yaw_joint"]
    assert roll_pitch.held and yaw.held
    assert _carried(m, "waist_pitch_joint") == pytest.approx(27.7, abs=0.1)
    assert roll_pitch.group.kp == pytest.approx(HOLD * _carried(m, "waist_roll_joint"), rel=0.005) == 138.0
    assert yaw.group.kp == pytest.approx(HOLD * _carried(m, "waist_yaw_joint"), rel=0.005) == 174.0
    assert 0.9 * 150 < roll_pitch.group.kp < yaw.group.kp < 1.2 * 150  # Unitree's G1 deploy: the waist at 150 / 3
    assert (roll_pitch.group.kd, yaw.group.kd) == (21.6, 13.7)  # critically damped (kp / 40: 3.45, 4.35)
    assert (roll_pitch.group.effort_limit, yaw.group.effort_limit) == (50.0, 88.0)  # the motors'
    assert "kp raised from 50 to 5 x M g r 27.7 N m/rad" in roll_pitch.note, roll_pitch.note
    arms = groups[".*_shoulder_pitch_joint|.*_shoulder_roll_joint|.*_shoulder_yaw_joint|.*_elbow_joint"]
    assert max(HOLD * _carried(m, j) for j in ("left_shoulder_pitch_joint", "left_elbow_joint")) < 25.0
    assert (arms.group.kp, arms.group.kd, arms.group.effort_limit) == (25.0, 3.44, 25.0)
    assert "kp raised" not in arms.note and "kd raised from 0.625 to 3.44" in arms.note, arms.note
    trained = {g.group.joints: (g.group.kp, g.group.kd, g.group.action_scale) for g in d.groups if not g.held}
    assert trained == {".*_hip_pitch_joint|.*_hip_yaw_joint": (88.0, 1.89, None),  # the next test's rule
                       ".*_hip_roll_joint|.*_knee_joint": (139.0, 3.74, None),
                       ".*_ankle_pitch_joint|.*_ankle_roll_joint": (50.0, 1.2, None)}
    assert all(a is None for a in (g.group.action_scale for g in d.groups if g.held))


def test_legs_of_a_file_without_actuators_at_unitree_s_g1_gains_by_rule() -> None:
    """Issues 46 / 47: a file with no actuators but its motors' effort limits and armature J (mjlab's G1) drafts its
    legs at kp = 1 x the effort limit and kd = 2 sqrt(kp J) (damping ratio 1 on the armature), at the task's action
    scale: within 0.8-1.3 x Unitree's own G1 RL gains for each motor (``band.MAKERS``), inside the band, named in
    each group's note and the summary line."""
    m = mujoco.MjModel.from_xml_path(str(G1))
    d = draft(G1, "g1")
    unitree = {x.effort: (x.kp, x.kd) for x in MAKERS if x.source.startswith("unitree_rl_gym's G1")}
    for g in (g for g in d.groups if not g.held):
        joints = [m.joint(j).name for j in range(m.njnt) if re.fullmatch(g.group.joints, m.joint(j).name)]
        armature = float(m.joint(joints[0]).armature[0])
        assert g.group.kp == g.group.effort_limit, g.group
        assert g.group.kd == pytest.approx(2 * (g.group.kp * armature) ** 0.5, rel=0.01), g.group
        kp, kd = unitree[g.group.effort_limit]
        assert 0.8 < g.group.kp / kp < 1.3 and 0.55 < g.group.kd / kd < 1.1, (g.group, kp, kd)
        b = band(g.group.effort_limit, armature)
        assert b.low <= g.group.kp <= b.high and g.group.kd <= b.kd_high, (g.group, b)
        assert "critically damped on the file's armature" in g.note and g.group.armature is None, g.note
        assert g.group.action_scale is None
    assert any("of the legs 1 x effort limit, critically damped" in x for x in d.guesses), d.guesses


def _inertia(m: mujoco.MjModel, joint: str) -> float:
    """The inertia about ``joint``'s axis of every body below it at the file's reference pose (each body's own
    inertia about the axis through its centre, plus its mass times its centre's squared distance from the axis),
    plus the joint's armature."""
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    j = m.joint(joint)
    axis, anchor = d.xaxis[j.id], d.xanchor[j.id]
    total = float(m.dof_armature[j.dofadr[0]])
    for b in (b for b in range(m.nbody) if int(j.bodyid[0]) in _ancestors(m, b)):
        rot = d.ximat[b].reshape(3, 3)
        local = rot.T @ axis
        r = d.xipos[b] - anchor
        perp = r - (r @ axis) * axis
        total += float(local @ (m.body_inertia[b] * local)) + float(m.body_mass[b]) * float(perp @ perp)
    return total


def test_held_joints_are_critically_damped_for_what_they_carry():
    """Issue 48: held joints are not observed, so they must not ring. At kd = kp / 40 the G1-style waist (138 / 3.45
    for a torso of 0.85 kg m^2 about its roll axis) had a damping ratio of 0.16 and its arms 0.3; the draft gives
    every held group kd >= 2 HOLD_DAMPING sqrt(kp I) for the largest inertia I its joints carry (HOLD_DAMPING 1);
    the trained joints keep their rule's kd (on the armature alone: the previous test)."""
    m = mujoco.MjModel.from_xml_path(str(G1))
    d = draft(G1, "g1")
    held = [g for g in d.groups if g.held]
    assert {g.group.joints for g in held} == {"waist_yaw_joint", "waist_roll_joint|waist_pitch_joint",
                                              ".*_shoulder_pitch_joint|.*_shoulder_roll_joint|"
                                              ".*_shoulder_yaw_joint|.*_elbow_joint"}
    assert _inertia(m, "waist_roll_joint") == pytest.approx(0.847, abs=0.002)
    for g in held:
        joints = [m.joint(i).name for i in range(m.njnt) if re.fullmatch(g.group.joints, m.joint(i).name)]
        worst = max(_inertia(m, j) for j in joints)
        ratio = g.group.kd / (2.0 * (g.group.kp * worst) ** 0.5)
        assert ratio == pytest.approx(HOLD_DAMPING, abs=0.005), (g.group.joints, ratio)
        assert "damping ratio 1 for the" in g.note, g.note
    assert all("damping ratio 1 for the" not in g.note for g in d.groups if not g.held)
