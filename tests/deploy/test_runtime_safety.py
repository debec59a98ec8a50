"""The runtime's safety layer (watchdog, e-stop, limits), joints matched by name, and the metadata versions,
on a trained quadruped policy (tests/data/quadruped_policy_format1.onnx, a legged-mjx-policy/1 file: the
repository's shipped quadruped-flat policy until issue 40)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.controller import Controller
from deploy.runtime.loop import Runtime
from deploy.runtime.robot import JointCommand, RobotState
from deploy.runtime.safety import SafetyConfig

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "tests" / "data" / "quadruped_policy_format1.onnx"


@pytest.fixture(scope="module")
def meta():
    return OnnxPolicy(POLICY).metadata


def standing(meta, order, stamp=0.0, quat=(1.0, 0.0, 0.0, 0.0)) -> RobotState:
    """The robot standing still at the default pose, joints in ``order``."""
    q = dict(zip(meta["joint_names"], meta["default_joint_pos"], strict=True))
    n = len(order)
    return RobotState(stamp, np.array([q[j] for j in order]), np.zeros(n), np.array(quat), np.zeros(3), np.zeros(3))


def with_metadata(tmp_path: Path, source: Path = POLICY, name: str = "changed.onnx", **changes) -> Path:
    """A copy of ``source`` (``tmp_path / name``) with metadata values replaced (JSON text, or a plain string) or
    removed (None)."""
    import onnx

    model = onnx.load(str(source))
    props = {p.key: p.value for p in model.metadata_props}
    props.update({k: v for k, v in changes.items() if v is not None})
    for k in [k for k, v in changes.items() if v is None]:
        props.pop(k)
    del model.metadata_props[:]
    for k, v in props.items():
        model.metadata_props.add(key=k, value=v)
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def test_a_format_1_file_with_its_scene_is_read_with_joint_ranges_from_the_scene(meta):
    assert meta["format"] == "legged-mjx-policy/1"
    limits = np.array(meta["joint_pos_limits"], dtype=float)
    assert limits.shape == (12, 2) and (limits[:, 0] < meta["default_joint_pos"]).all()
    assert (limits[:, 1] > meta["default_joint_pos"]).all()


def test_unknown_major_and_early_format_1_files_are_refused_in_one_line(tmp_path):
    with pytest.raises(UserError, match=r"format 'legged-mjx-policy/3'.*reads majors 1, 2: upgrade legged-mjx, or "
                                        r"re-export it with: python play.py --checkpoint RUN_DIR --export-onnx") as e:
        OnnxPolicy(with_metadata(tmp_path, format="legged-mjx-policy/3"))
    assert "\n" not in str(e.value)
    assert OnnxPolicy(with_metadata(tmp_path, format="legged-mjx-policy/2.7")).metadata["format"].endswith("2.7")
    old = with_metadata(tmp_path, scene_mjb=None, robot_xml="envs/robots/quadruped.xml")
    with pytest.raises(UserError, match="early legged-mjx-policy/1 export .* re-export it with: python play.py"):
        OnnxPolicy(old)


def test_joints_are_matched_by_name_for_a_robot_whose_sdk_orders_them_otherwise(meta):
    names = meta["joint_names"]
    sdk = [f"sdk_{n}" for n in sorted(names, key=lambda n: (n[:2][::-1], n))]  # legs grouped otherwise, renamed
    joint_map = {f"sdk_{n}": n for n in names}
    rng = np.random.default_rng(0)
    q_policy = np.array(meta["default_joint_pos"]) + rng.normal(0.0, 0.2, 12)
    qd_policy = rng.normal(0.0, 1.0, 12)
    pick = [names.index(n.removeprefix("sdk_")) for n in sdk]
    in_sdk = RobotState(0.0, q_policy[pick], qd_policy[pick], np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))
    in_policy = RobotState(0.0, q_policy, qd_policy, np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))
    a = Controller(OnnxPolicy(POLICY), sdk, joint_map=joint_map)
    b = Controller(OnnxPolicy(POLICY), names)
    cmd = np.array([0.5, 0.0, 0.2])
    np.testing.assert_array_equal(a.observe(in_sdk, cmd), b.observe(in_policy, cmd))
    ca = a.command(in_sdk, a.infer(a.last_obs))
    cb = b.command(in_policy, b.infer(b.last_obs))
    assert not np.array_equal(ca.target, cb.target)  # the orders differ, so the raw arrays do
    np.testing.assert_allclose(ca.target, cb.target[pick])
    np.testing.assert_allclose(ca.kp, np.array(meta["kp"])[pick])
    with pytest.raises(UserError, match=f"joint\\(s\\) {sdk[0][4:]} are not exactly once among the robot's"):
        Controller(OnnxPolicy(POLICY), sdk[1:] + ["extra"], joint_map=joint_map)


def test_watchdog_goes_to_a_damped_stance_on_stale_data_and_stays(meta):
    cfg = SafetyConfig(max_unchanged_s=0.05, max_sample_age_s=0.1)
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    fresh = standing(meta, meta["joint_names"], stamp=1.0)
    assert ctl.tick(fresh, 1.001, np.zeros(3)) is not None and ctl.safety.mode == "run"
    ctl.tick(fresh, 1.04, np.zeros(3))
    assert ctl.safety.mode == "run"  # 40 ms without a new sample: still fine
    out = ctl.tick(fresh, 1.07, np.zeros(3))  # the same sample 70 ms later: the sensor path is stuck
    assert ctl.safety.mode == "stance" and "no new sensor sample" in ctl.safety.reason
    np.testing.assert_allclose(out.kd, 2.0 * np.array(meta["kd"]))
    np.testing.assert_allclose(out.kp, meta["kp"])
    obs_before = ctl.last_obs
    ctl.tick(standing(meta, meta["joint_names"], stamp=1.08), 1.081, np.zeros(3))
    assert ctl.safety.mode == "stance" and ctl.last_obs is obs_before  # latched; the policy no longer runs
    # an old sample (sensor latency beyond the limit) and non-finite data trip it as well
    late = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    late.tick(standing(meta, meta["joint_names"], stamp=5.0), 5.2, np.zeros(3))
    assert late.safety.mode == "stance" and "200 ms old" in late.safety.reason
    bad = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    nan_state = standing(meta, meta["joint_names"], stamp=1.0)
    nan_state.joint_vel[3] = np.nan
    bad.tick(nan_state, 1.0, np.zeros(3))
    assert bad.safety.mode == "stance" and "non-finite" in bad.safety.reason


def test_with_stale_mode_estop_the_watchdog_damps_instead_and_a_missed_deadline_still_stands(meta):
    """The Unitree sequence's choice: no fresh state -> zero stiffness and damping, never kp toward a pose."""
    cfg = SafetyConfig(max_unchanged_s=0.05, stale_mode="estop")
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    fresh = standing(meta, meta["joint_names"], stamp=1.0)
    ctl.tick(fresh, 1.001, np.zeros(3))
    out = ctl.tick(fresh, 1.07, np.zeros(3))
    assert ctl.safety.mode == "estop" and "no new sensor sample" in ctl.safety.reason
    assert not np.any(out.kp) and np.allclose(out.kd, 2.0 * np.array(meta["kd"]))
    nan_state = standing(meta, meta["joint_names"], stamp=1.0)
    nan_state.joint_pos[0] = np.nan
    bad = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    bad.tick(nan_state, 1.0, np.zeros(3))
    assert bad.safety.mode == "estop" and "non-finite" in bad.safety.reason
    late = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    late.safety.deadline(True)
    assert late.safety.mode == "stance"  # a late tick with a fresh state is not a blind robot
    with pytest.raises(UserError, match="stale_mode='damp' is not allowed; expected 'stance' or 'estop'"):
        Controller(OnnxPolicy(POLICY), meta["joint_names"], SafetyConfig(stale_mode="damp"))


def test_the_stance_walks_targets_to_the_default_pose_at_the_rate_limit(meta):
    cfg = SafetyConfig(max_target_rate=5.0)
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"], cfg)
    state = standing(meta, meta["joint_names"], stamp=1.0)
    state.joint_pos[:] += 0.3
    ctl.safety.trip("stance", "test")
    first = ctl.command(state, None)
    np.testing.assert_allclose(first.target, state.joint_pos - 5.0 * 0.02)
    for _ in range(20):
        out = ctl.command(state, None)
    np.testing.assert_allclose(out.target, meta["default_joint_pos"])


def test_emergency_stop_on_a_planted_fall_is_latched(meta):
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"])
    t = 1.0
    ctl.tick(standing(meta, meta["joint_names"], stamp=t), t, np.zeros(3))
    assert ctl.safety.mode == "run"
    side = (np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0)  # rolled 90 degrees: lying on its side
    out = ctl.tick(standing(meta, meta["joint_names"], stamp=t + 0.02, quat=side), t + 0.02, np.zeros(3))
    assert ctl.safety.mode == "estop" and "tilted 90 deg" in ctl.safety.reason
    assert (out.kp == 0).all() and (out.kd > 0).all()
    out = ctl.tick(standing(meta, meta["joint_names"], stamp=t + 0.04), t + 0.04, np.zeros(3))  # upright again
    assert ctl.safety.mode == "estop" and (out.kp == 0).all()
    ctl.safety.trip("stance", "later")  # nothing leaves an e-stop
    assert ctl.safety.mode == "estop"


def test_a_missed_deadline_trips_the_watchdog(meta):
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"], SafetyConfig(max_missed_deadlines=2))
    ctl.safety.deadline(True)
    ctl.safety.deadline(False)
    ctl.safety.deadline(True)
    assert ctl.safety.mode == "run"
    ctl.safety.deadline(True)
    assert ctl.safety.mode == "stance" and "2 missed deadline" in ctl.safety.reason


def test_targets_respect_joint_ranges_rate_and_torque_limits(meta):
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"], SafetyConfig(max_target_rate=1000.0))
    state = standing(meta, meta["joint_names"], stamp=1.0)
    q = state.joint_pos
    limits = np.array(meta["joint_pos_limits"], dtype=float)
    target, kp, kd = ctl.safety.command(q + 100.0, q, np.zeros(12))
    torque = np.array(meta["torque_limits"])
    assert (target <= limits[:, 1] + torque / kp + 1e-12).all()
    np.testing.assert_allclose(np.minimum(kp * (target - q), torque), kp * (target - q))
    assert (kp * (target - q) <= torque + 1e-9).all() and ctl.safety.clipped == 1
    slow = Controller(OnnxPolicy(POLICY), meta["joint_names"], SafetyConfig(max_target_rate=2.0))
    t1, _, _ = slow.safety.command(q + 0.5, q, np.zeros(12))
    np.testing.assert_allclose(t1, q + 2.0 * 0.02)


def test_a_joint_at_its_stop_is_pressed_with_up_to_the_motor_torque_as_in_training(meta):
    """Training does not clip targets to the joint ranges: the runtime lets a target pass a range by up to
    torque_limit / kp (the motor's whole torque against the stop), and no further."""
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"], SafetyConfig(max_target_rate=1000.0))
    limits = np.array(meta["joint_pos_limits"], dtype=float)
    q = limits[:, 1].copy()  # every joint at its upper stop
    kp, torque = ctl.safety.kp, np.array(meta["torque_limits"])
    target, _, _ = ctl.safety.command(q + 0.5 * torque / kp, q, np.zeros(12))
    np.testing.assert_allclose(target, q + 0.5 * torque / kp)  # half the torque against the stop: kept
    target, _, _ = ctl.safety.command(q + 3.0 * torque / kp, q, np.zeros(12))
    np.testing.assert_allclose(target, q + torque / kp)  # the whole torque, no further
    margin = Controller(OnnxPolicy(POLICY), meta["joint_names"], SafetyConfig(max_target_rate=1000.0,
                                                                               limit_margin=0.01))
    target, _, _ = margin.safety.command(q + 3.0 * torque / kp, q, np.zeros(12))
    np.testing.assert_allclose(target, q + torque / kp - 0.01)


class FakeRobot:
    """An in-process robot: standing, its sample refreshed on every read until ``stop_at`` reads."""

    def __init__(self, meta, stop_at: int):
        self._names = list(reversed(meta["joint_names"]))
        self.meta, self.stop_at, self.reads = meta, stop_at, 0
        self.written: list[JointCommand] = []
        self._state = None

    @property
    def joint_names(self):
        return self._names

    def clock(self) -> float:
        import time

        return time.monotonic()

    def read(self):
        self.reads += 1
        if self.reads <= self.stop_at or self._state is None:
            self._state = standing(self.meta, self._names, stamp=self.clock())
        return self._state

    def write(self, command: JointCommand) -> None:
        self.written.append(command)


@pytest.mark.exclusive  # real-time bounds: alone under xdist (tests/parallel.py)
def test_the_loop_times_each_tick_and_its_watchdog_catches_a_sensor_stop(meta, tmp_path):
    robot = FakeRobot(meta, stop_at=10)
    runtime = Runtime(OnnxPolicy(POLICY, threads=1), robot, SafetyConfig(max_unchanged_s=0.05))
    out = runtime.run(0.5, lambda t: np.zeros(3))
    assert out["ticks"] == 25 - 5 and len(robot.written) == 25
    assert out["mode"] == "stance" and "no new sensor sample" in out["reason"]
    assert {"p50", "p99", "max"} == set(out["inference_ms"]) and out["inference_ms"]["p99"] > 0
    runtime.log.write_csv(tmp_path / "ticks.csv")
    lines = (tmp_path / "ticks.csv").read_text().splitlines()
    assert lines[0].startswith("tick,late_ms,read_ms,obs_ms,inference_ms") and len(lines) == 26
    assert lines[-1].endswith("stance")


def test_docs_carry_the_schema_tables_verbatim():
    from contract import schema

    text = (ROOT / "docs" / "deploy.md").read_text()
    assert f"<!-- schema:begin -->\n{schema.markdown()}\n<!-- schema:end -->" in text


def test_the_runtime_imports_neither_torch_nor_mujoco():
    import subprocess
    import sys

    code = ("import sys, deploy.runtime.loop, deploy.runtime.udp, deploy.runtime.controller; "
            "print('torch' in sys.modules, 'mujoco' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["False", "False"], out.stderr


def test_a_fall_in_the_stance_still_stops_and_the_first_cause_is_kept(meta):
    ctl = Controller(OnnxPolicy(POLICY), meta["joint_names"])
    ctl.safety.deadline(True)
    side = (np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0)
    out = ctl.tick(standing(meta, meta["joint_names"], stamp=1.0, quat=side), 1.0, np.zeros(3))
    assert ctl.safety.mode == "estop" and (out.kp == 0).all()
    assert "missed deadline" in ctl.safety.reason and len(ctl.safety.history) == 2
    assert ctl.safety.history[1].startswith("e-stop")
