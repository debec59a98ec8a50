"""The safety layer between the policy and the motors: limits, a target rate limit, a watchdog and an e-stop.

It drives every joint the policy's servos drive: the trained joints (policy order), then the held ones
(``held_joint_names``: their target is always ``held_joint_pos``, their gains ``held_kp`` / ``held_kd``, limited
like the trained joints' by ``held_torque_limits``; no range is exported for them, their pose lies in it).

Modes (``Safety.mode``), each latched until the runtime is restarted:
    run      the policy's targets, clipped to the joint ranges widened on each side by ``torque_limit / kp`` (less
             a margin), moved at most ``max_target_rate`` per second, and clamped so that the PD torque
             ``kp (target - q) - kd qd`` stays within the torque limits (a firmware that does not saturate gets no
             more than the servo of training gave). The widening is training's: its targets are not clipped to the
             ranges, so a policy may press a joint against its stop with up to the motor's torque (the G1-style
             policy's ankle rolls do, on 61% of ticks); a target further out adds no torque once the joint is in range.
    stance   the watchdog fired (stale or non-finite sensor data, a missed deadline): the targets go to the
             default pose (held joints: their pose) at the rate limit, with the policy's stiffness and
             ``stance_kd_scale`` x its damping.
    estop    the base tilted more than ``max_tilt`` from upright (a fall): zero stiffness, ``estop_kd_scale`` x the
             damping (the robot settles, nothing drives it). With ``stale_mode="estop"`` (the Unitree sequence,
             as Unitree's own deploy programs fall to damping) the sensor watchdog leads here instead of ``stance``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from contract import schema
from contract.errors import UserError
from contract.terms import gravity_in_base
from deploy.runtime.robot import RobotState


@dataclass(frozen=True)
class SafetyConfig:
    """Thresholds of the safety layer."""

    max_sample_age_s: float = 0.1
    """Watchdog: the newest sensor sample is older than this (robot clock; includes the sensor path's latency)."""
    max_unchanged_s: float = 0.05
    """Watchdog: no new sensor sample arrived for this long (s)."""
    max_missed_deadlines: int = 1
    """Watchdog: this many consecutive ticks wrote their command after their deadline."""
    max_tilt: float = 1.0
    """E-stop: the base's up axis is more than this from vertical (rad)."""
    max_target_rate: float = 30.0
    """Largest change of a joint target per second (rad/s), in every mode."""
    limit_margin: float = 0.0
    """Targets stay this far inside the joint ranges of the metadata widened by ``torque_limit / kp`` (rad; the
    module docstring says why the widening)."""
    stance_kd_scale: float = 2.0
    """Damping of the stance relative to the policy's kd."""
    estop_kd_scale: float = 2.0
    """Damping of the e-stop relative to the policy's kd (stiffness 0)."""
    stale_mode: str = "stance"
    """Where the sensor watchdog (data stopped, unchanged, too old or non-finite) leads: ``stance`` (the default pose
    at the policy's stiffness) or ``estop`` (zero stiffness, damping: nothing drives a robot no state judges)."""


class Safety:
    """Checks each tick's sample and turns the policy's targets into the command the motors get (policy order)."""

    def __init__(self, meta: dict[str, Any], cfg: SafetyConfig, dt: float, where: str = "runtime: the policy"):
        """``where``: how a refusal names the policy file (``schema.servos``)."""
        if cfg.stale_mode not in ("stance", "estop"):
            raise UserError(f"safety: stale_mode={cfg.stale_mode!r} is not allowed; expected 'stance' or 'estop'")
        self.cfg, self.dt = cfg, dt
        servos = schema.servos(meta, where)
        self.hold = np.asarray(meta.get("held_joint_pos", []), dtype=np.float64)
        """The held joints' targets (rad), appended to the policy's in every mode."""
        self.kp = np.asarray(servos.kp, dtype=np.float64)
        self.kd = np.asarray(servos.kd, dtype=np.float64)
        self.default = np.asarray(servos.pose, dtype=np.float64)
        ranges = list(meta["joint_pos_limits"]) + [[None, None]] * len(self.hold)
        lim = np.array([[-np.inf if lo is None else lo, np.inf if hi is None else hi] for lo, hi in ranges],
                       dtype=np.float64)
        self.torque = np.asarray(servos.torque_limits, dtype=np.float64)
        with np.errstate(divide="ignore"):  # kp 0 or no torque limit: the range itself
            slack = np.where((self.kp > 0) & np.isfinite(self.torque), self.torque / self.kp, 0.0)
        self.low, self.high = lim[:, 0] - slack + cfg.limit_margin, lim[:, 1] + slack - cfg.limit_margin
        self.mode = "run"
        self.reason = ""
        """Why the mode first left ``run`` (one line)."""
        self.history: list[str] = []
        """Every trip that changed the mode, in order."""
        self.last_target: Optional[np.ndarray] = None
        self._last_stamp: Optional[float] = None
        self._last_new = 0.0
        self._misses = 0
        self.clipped = 0
        """Ticks on which a limit changed a policy target."""

    def trip(self, mode: str, reason: str) -> None:
        """Leave ``run`` for ``stance`` or ``estop`` (an e-stop also overrides a stance; nothing leaves e-stop)."""
        if self.mode == "estop" or (self.mode == "stance" and mode == "stance"):
            return
        self.mode = mode
        self.reason = self.reason or reason
        self.history.append(reason)

    def check(self, state: Optional[RobotState], now: float) -> None:
        """The watchdog and the e-stop on this tick's sample (``now``: robot clock)."""
        cfg = self.cfg
        if state is None:
            if now - self._last_new > cfg.max_unchanged_s and self._last_stamp is not None:
                self.trip(cfg.stale_mode, "watchdog: sensor data stopped")
            return
        if state.stamp != self._last_stamp:
            self._last_stamp, self._last_new = state.stamp, now
        if self._last_new == 0.0:
            self._last_new = now
        if now - self._last_new > cfg.max_unchanged_s:
            self.trip(cfg.stale_mode, f"watchdog: no new sensor sample for {1e3 * (now - self._last_new):.0f} ms")
        elif now - state.stamp > cfg.max_sample_age_s:
            self.trip(cfg.stale_mode, f"watchdog: the sensor sample is {1e3 * (now - state.stamp):.0f} ms old")
        finite = all(np.isfinite(x).all() for x in (state.joint_pos, state.joint_vel, state.imu_quat, state.gyro))
        if not finite:
            self.trip(cfg.stale_mode, "watchdog: non-finite sensor data")
            return
        up = -gravity_in_base(state.imu_quat)[2]  # cos(tilt)
        if up < np.cos(cfg.max_tilt):
            self.trip("estop", f"e-stop: the base tilted {np.degrees(np.arccos(np.clip(up, -1, 1))):.0f} deg")

    def deadline(self, missed: bool) -> None:
        """Count consecutive missed deadlines; the watchdog fires at ``max_missed_deadlines``."""
        self._misses = self._misses + 1 if missed else 0
        if self.cfg.max_missed_deadlines and self._misses >= self.cfg.max_missed_deadlines:
            self.trip("stance", f"watchdog: {self._misses} missed deadline(s)")

    def _rate_limited(self, target: np.ndarray, q: np.ndarray) -> np.ndarray:
        last = q if self.last_target is None else self.last_target
        step = self.cfg.max_target_rate * self.dt
        return np.clip(target, last - step, last + step)

    def command(self, policy_target: Optional[np.ndarray], q: np.ndarray, qd: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(target, kp, kd)`` for this tick from the policy's targets (policy order; None outside ``run``) and
        the measured joint positions and velocities (policy order, then the held joints); the outputs cover both."""
        if policy_target is not None:
            policy_target = np.concatenate([policy_target, self.hold])
        if self.mode == "estop":
            target = q.copy() if self.last_target is None else self.last_target
            return target, np.zeros_like(self.kp), self.cfg.estop_kd_scale * self.kd
        if self.mode == "stance" or policy_target is None:
            target = self._rate_limited(self.default, q)
            self.last_target = target
            kd = self.kd * (self.cfg.stance_kd_scale if self.mode == "stance" else 1.0)
            return target, self.kp, kd
        target = np.clip(self._rate_limited(policy_target, q), self.low, self.high)
        with np.errstate(divide="ignore", invalid="ignore"):  # kp 0: no torque from the target
            lo = np.where(self.kp > 0, q + (-self.torque + self.kd * qd) / self.kp, -np.inf)
            hi = np.where(self.kp > 0, q + (self.torque + self.kd * qd) / self.kp, np.inf)
        safe = np.clip(target, lo, hi)
        if not np.array_equal(safe, policy_target):
            self.clipped += 1
        self.last_target = safe
        return safe, self.kp, self.kd
