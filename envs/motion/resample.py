"""A clip resampled to another frame rate (the control rate): positions and joint angles linearly, the base's
orientation by spherical linear interpolation. The new clip spans the old one's duration from its first frame; its
last frame is the last one at or before the old clip's end."""

from __future__ import annotations

import math

import numpy as np

from contract.errors import UserError
from contract.motion import Clip, quat_conj, quat_mul, rotation_vector


def resample(clip: Clip, fps: float) -> Clip:
    """``clip`` at ``fps`` frames per second (the same clip when the rates agree)."""
    if not math.isfinite(fps) or fps <= 0:
        raise UserError(f"motion clip {clip.name}: cannot resample to fps={fps!r}; expected a number > 0")
    if abs(fps - clip.fps) < 1e-9:
        return clip
    count = int(math.floor(clip.duration * fps + 1e-9)) + 1
    if count < 2:
        raise UserError(f"motion clip {clip.name}: {clip.duration:.3f} s is shorter than two frames at {fps:g} fps")
    t = np.arange(count) * (clip.fps / fps)  # in source frames
    i = np.minimum(np.floor(t).astype(np.int64), clip.frames - 2)
    w = (t - i)[:, None]
    lerp = lambda a: a[i] * (1.0 - w) + a[i + 1] * w  # noqa: E731
    return Clip(float(fps), clip.joint_names, lerp(clip.base_pos), slerp(clip.base_quat[i], clip.base_quat[i + 1],
                                                                          w[:, 0]), lerp(clip.joint_pos), clip.name)


def slerp(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spherical interpolation from unit quaternions ``a`` to ``b`` ``[F, 4]`` by ``w [F]`` (the shorter arc)."""
    b = b * np.where(np.sum(a * b, axis=1, keepdims=True) < 0, -1.0, 1.0)
    rel = rotation_vector(quat_mul(b, quat_conj(a))) * w[:, None]
    angle = np.linalg.norm(rel, axis=1, keepdims=True)
    axis = rel / np.maximum(angle, 1e-12)
    step = np.concatenate([np.cos(angle / 2), axis * np.sin(angle / 2)], axis=1)
    out = quat_mul(step, a)
    return out / np.linalg.norm(out, axis=1, keepdims=True)
