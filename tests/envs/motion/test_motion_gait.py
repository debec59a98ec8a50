"""envs/motion/gait (tools/experiments/gait_match): duty factors and phases from contact signals, pooled over clips."""

import numpy as np
import pytest

from envs.motion.gait import compare, gait

FEET = ("FR", "FL", "RR", "RL")


def trot(frames: int, period: int, duty: float, shift: int = 0) -> np.ndarray:
    """Contact signals of a trot: FR and RL together, FL and RR half a stride later."""
    t = (np.arange(frames) + shift) % period
    first = t < duty * period
    second = ((t + period // 2) % period) < duty * period
    return np.stack([first, second, second, first], axis=1)


def test_a_trot_reads_as_a_trot() -> None:
    g = gait([trot(200, 20, 0.6)], FEET)
    assert g["duty_factor"]["FR"] == pytest.approx(0.6)
    phases = g["phase_after_FR"]
    assert min(phases["RL"], 1 - phases["RL"]) < 0.01  # the diagonal foot lands with FR
    assert phases["FL"] == pytest.approx(0.5, abs=0.01)


def test_clips_pool_frames_and_touchdowns() -> None:
    a, b = trot(200, 20, 0.5), trot(100, 20, 0.8, shift=3)
    g = gait([a, b], FEET)
    assert g["duty_factor"]["FL"] == pytest.approx((200 * 0.5 + 100 * 0.8) / 300)
    assert gait([a, a], FEET) == gait([a], FEET)


def test_a_different_gait_does_not_match() -> None:
    ref = gait([trot(200, 20, 0.6)], FEET)
    assert compare(ref, gait([trot(200, 20, 0.62)], FEET))["within_10_percent"]
    bound = trot(200, 20, 0.6)[:, [0, 3, 2, 1]]  # the front feet together, then the hind feet
    assert not compare(ref, gait([bound], FEET))["within_10_percent"]
    assert not compare(ref, gait([trot(200, 20, 0.9)], FEET))["within_10_percent"]
