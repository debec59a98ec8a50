"""Every observation term, declared once: its unit and meaning, what supplies it on a robot, and its value from a
robot's reading in numpy.

The trainer's families list the terms they observe, in order, with their training details (value, width, scale,
bound, noise, mirror: ``envs/tasks/obs_table.py``), each row naming a term declared here (a row that does not is
refused when the table is built). Deployment reads nothing else: sim2sim (``deploy/sim2sim.py``) and the
robot-side runtime (``deploy/runtime/observation.py``) both turn a ``Reading`` into the observation with
``build``, so the two cannot disagree; the runtime refuses a policy whose terms need a source its robot lacks
(``deploy/runtime/supply.py``); docs/deploy.md's term table is ``contract.schema.markdown()``.

A new term is one ``Term`` here (with ``build`` if a robot can supply it) and one row in a family's table (its
torch value, bound, scale, noise, clip and mirror).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Optional

import numpy as np

from contract.errors import UserError

MirrorRule = Literal["vector", "axial", "command", "joints", "none"]
"""How a term's values change under the left-right mirror: ``vector`` (x, -y, z), ``axial`` (-x, y, -z: an angular
velocity), ``command`` (vx, -vy, -yaw rate), ``joints`` (one value per joint: twins swapped, roll / yaw angles
negated), ``none`` (no mirror: a task with such a term offers no symmetry)."""


@dataclass(frozen=True)
class Source:
    """What supplies observation terms on a robot."""

    meaning: str
    """What it is, in words."""
    robot: bool
    """Whether a robot has to supply it (its sensors, an estimator, perception); False: the runtime has it itself
    (the operator's commands, its own previous action)."""
    instead: str = ""
    """What to do when a robot lacks it (the refusal's alternatives; ``{term}`` is the term's name)."""


SOURCES: dict[str, Source] = {
    "joint_state": Source("the joint encoders: positions and velocities of every motor (every robot's low state)", True,
                          "an adapter that reads the joint encoders (RobotState.joint_pos / joint_vel)"),
    "imu": Source("the base's IMU: orientation and gyro (every Unitree low state)", True,
                  "an adapter that reads the IMU (RobotState.imu_quat / gyro)"),
    "operator": Source("the operator: velocity commands from a joystick, a remote or a planner", False),
    "runtime": Source("the runtime itself: its previous action", False),
    "estimator": Source("a state estimator (no robot's low state carries it)", True,
                        "a policy that does not observe {term} (quadruped-flat, or any flat task with "
                        "env.policy_exclude=[{term}]), or an adapter with an estimator (RobotState.{term}) on a "
                        "profile that supplies 'estimator'"),
    "motion": Source("the motion clip the runtime plays: its reference frames and phase (metadata motion_clips)",
                     False),
    "perception": Source("perception: a height map around the robot from its cameras or lidar", True,
                         "a policy trained without {term} (a flat task), or an adapter with perception "
                         "(RobotState.{term}) on a profile that supplies 'perception'"),
}
"""Every source of the observation terms, by name (``Term.source``)."""


@dataclass(frozen=True)
class Reading:
    """What one step of a robot (or of a plain MuJoCo simulation) gives the observation, joints in the policy's
    order, with what the runtime adds (the operator's command, its previous action)."""

    joint_pos: np.ndarray
    """Joint positions (rad), ``joint_names`` order."""
    joint_vel: np.ndarray
    """Joint velocities (rad/s), ``joint_names`` order."""
    imu_quat: np.ndarray
    """Base orientation (w, x, y, z): base frame -> gravity-aligned world frame."""
    gyro: np.ndarray
    """Base angular velocity (rad/s), base frame."""
    commands: np.ndarray
    """Velocity command (vx, vy m/s in the base frame, yaw rate rad/s)."""
    last_actions: np.ndarray
    """The previous step's clipped action."""
    base_lin_vel: Optional[np.ndarray] = None
    """Base linear velocity (m/s), base frame; None without an estimator."""
    heights: Optional[np.ndarray] = None
    """Height of the base above the ground (m, positive) at each point of the metadata's ``height_scan`` grid
    (x-major, base yaw frame); None without perception."""


@dataclass(frozen=True)
class Constants:
    """What the builders read of a policy's metadata, prepared once."""

    default_joint_pos: np.ndarray
    """``default_joint_pos`` (rad)."""
    scan_offset: float = 0.0
    """``height_scan.offset`` (m)."""
    scan_clip: float = np.inf
    """``height_scan.clip`` (m)."""

    @staticmethod
    def of(meta: dict[str, Any]) -> Constants:
        scan = meta.get("height_scan") or {}
        return Constants(np.asarray(meta["default_joint_pos"], dtype=np.float64), float(scan.get("offset", 0.0)),
                         float(scan.get("clip", np.inf)))


def gravity_in_base(quat: np.ndarray) -> np.ndarray:
    """World (0, 0, -1) in the base frame for a (w, x, y, z) quaternion base -> world (normalized first)."""
    w, x, y, z = np.asarray(quat, dtype=np.float64) / np.linalg.norm(quat)
    # third row of the rotation matrix, negated: R^T (0, 0, -1) = -(R[2, 0], R[2, 1], R[2, 2])
    return -np.array([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])


def _needs(value: Optional[np.ndarray], term: str, field: str) -> np.ndarray:
    if value is None:
        raise UserError(f"observation: the policy observes {term} but the robot gives none ({field})")
    return np.asarray(value, dtype=np.float64)


Build = Callable[[Reading, Constants], np.ndarray]


@dataclass(frozen=True)
class Term:
    """One observation term."""

    unit: str
    """Physical unit before the term's ``obs_scales`` factor."""
    meaning: str
    """What it is, its frame and the order of its entries."""
    source: str
    """What supplies it on a robot: a name of ``SOURCES``."""
    build: Optional[Build] = None
    """Its raw value (float64, before ``obs_scales``) from a robot's reading; None: a family builds it in its own
    deployment code (reach: ``deploy/sim2sim_reach.py``), not from a robot."""


TERMS: dict[str, Term] = {
    "base_lin_vel": Term("m/s", "base linear velocity in the base frame (x forward, y left, z up)", "estimator",
                         lambda r, k: _needs(r.base_lin_vel, "base_lin_vel", "RobotState.base_lin_vel")),
    "base_ang_vel": Term("rad/s", "base angular velocity in the base frame (the IMU's gyro)", "imu",
                         lambda r, k: np.asarray(r.gyro, dtype=np.float64)),
    "projected_gravity": Term("1", "unit gravity direction in the base frame ((0, 0, -1) upright)", "imu",
                              lambda r, k: gravity_in_base(r.imu_quat)),
    "commands": Term("m/s, m/s, rad/s", "velocity command (vx, vy in the base frame, yaw rate), scaled per component",
                     "operator", lambda r, k: np.asarray(r.commands, dtype=np.float64)),
    "joint_pos": Term("rad", "joint positions minus `default_joint_pos`, `joint_names` order", "joint_state",
                      lambda r, k: np.asarray(r.joint_pos, dtype=np.float64) - k.default_joint_pos),
    "joint_vel": Term("rad/s", "joint velocities, `joint_names` order", "joint_state",
                      lambda r, k: np.asarray(r.joint_vel, dtype=np.float64)),
    "last_actions": Term("1", "the previous step's clipped action, `joint_names` order", "runtime",
                         lambda r, k: np.asarray(r.last_actions, dtype=np.float64)),
    "height_scan": Term("m", "`clip(base z - ground z - offset, -clip, clip)` at each scan point, x-major grid",
                        "perception", lambda r, k: np.clip(_needs(r.heights, "height_scan", "RobotState.height_scan")
                                                           - k.scan_offset, -k.scan_clip, k.scan_clip)),
    "target_pos": Term("m", "reach: target position relative to `base_pos`, base frame", "operator"),
    "to_target": Term("m", "reach: target minus fingertip position, base frame (from the target and the joint "
                      "state)", "operator"),
    "motion_joint_pos": Term("rad", "track: the reference's joint positions minus `default_joint_pos` at the next "
                             "`motion.future_frames` frames, frame-major, `joint_names` order", "motion"),
    "motion_joint_vel": Term("rad/s", "track: the reference's joint velocities at those frames, frame-major",
                             "motion"),
    "motion_anchor_pos": Term("m", "track: the reference's anchor body position at the next frame minus the "
                              "robot's anchor position, in the robot's anchor frame", "estimator"),
    "motion_anchor_ori": Term("1", "track: the reference's anchor orientation at the next frame in the robot's "
                              "anchor frame, the first two columns of that rotation matrix (6 values, column-major)",
                              "imu"),
    "motion_phase": Term("1", "track: the share of the clip played (0 at its first frame, 1 at its last)",
                         "motion"),
}
"""Every observation term of the locomotion, reach and track families, by name (each is then multiplied by its
``obs_scales``)."""

FROM_READING: tuple[str, ...] = tuple(name for name, t in TERMS.items() if t.build is not None)
"""The terms a robot's reading gives (what sim2sim and the runtime build)."""


def unknown(names: Any) -> list[str]:
    """The names among ``names`` that are no declared term."""
    return [n for n in names if n not in TERMS]


def values(names: Any, reading: Reading, k: Constants, where: str) -> dict[str, np.ndarray]:
    """Each named term's raw value from ``reading``; one line for a term not built from a reading."""
    missing = [n for n in names if n not in FROM_READING]
    if missing:
        raise UserError(f"{where}: observation term(s) {', '.join(missing)} are not built from a robot's reading; "
                        f"built: {', '.join(FROM_READING)}")
    return {n: TERMS[n].build(reading, k) for n in names}  # type: ignore[misc]
