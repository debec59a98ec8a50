"""Motion clips as data: our ``.npz`` clip format, its one-line checks and the numpy arithmetic on clips that the
trainer (``envs/motion/``) and deployment (``deploy/sim2sim_track.py``) share (numpy only: no torch, no MuJoCo).

A clip is a robot's floating-base pose and joint angles over time at a frame rate, its joints matched to a robot's
by name. The file is a numpy ``.npz`` with these arrays:

    format        str          ``legged-mjx-motion/1``
    fps           float        frames per second (> 0)
    joint_names   str [J]      the joints of the columns of ``joint_pos``
    base_pos      float [F, 3] the floating base's position (m, world frame, z up)
    base_quat     float [F, 4] its orientation, quaternion w x y z (base -> world), unit norm
    joint_pos     float [F, J] joint angles (rad; m for a slide joint)
    name          str          optional: what the clip shows

Everything else (body poses, velocities) is derived on load: by replaying the clip in the robot's MuJoCo model
(``envs/motion/replay.py``) and by finite differences (``velocities``).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from contract.errors import UserError

FORMAT = "legged-mjx-motion/1"
"""The ``format`` entry of our clip files."""
QUAT_TOLERANCE = 1e-3
"""A base quaternion whose norm is further than this from 1 is refused (a file in another convention, or broken)."""


@dataclass(frozen=True)
class Clip:
    """One motion clip (arrays float64; see the module docstring for units and frames)."""

    fps: float
    """Frames per second."""
    joint_names: tuple[str, ...]
    """The joints of ``joint_pos``'s columns."""
    base_pos: np.ndarray
    """``[F, 3]`` base position (m, world)."""
    base_quat: np.ndarray
    """``[F, 4]`` base orientation, w x y z (base -> world), unit norm."""
    joint_pos: np.ndarray
    """``[F, J]`` joint angles (rad)."""
    name: str = ""
    """What the clip shows (a file's stem when it names none)."""

    @property
    def frames(self) -> int:
        return int(self.joint_pos.shape[0])

    @property
    def duration(self) -> float:
        """Seconds from the first frame to the last."""
        return (self.frames - 1) / self.fps


def checked(clip: Clip, where: str) -> Clip:
    """``clip`` if it is a valid clip, its quaternions renormalized; otherwise one UserError line naming ``where``
    and what is wrong (a frame rate, a shape, the first non-finite value, a quaternion that is not unit)."""
    fps = float(clip.fps)
    if not math.isfinite(fps) or fps <= 0:
        raise UserError(f"{where}: frame rate fps={clip.fps!r} is not allowed; expected a number > 0")
    F, J = clip.joint_pos.shape if clip.joint_pos.ndim == 2 else (-1, -1)
    if F < 2 or J != len(clip.joint_names):
        raise UserError(f"{where}: joint_pos has shape {list(clip.joint_pos.shape)}; expected [frames >= 2, "
                        f"{len(clip.joint_names)}] (one column per joint name)")
    for key, width in (("base_pos", 3), ("base_quat", 4)):
        shape = getattr(clip, key).shape
        if shape != (F, width):
            raise UserError(f"{where}: {key} has shape {list(shape)}; expected [{F}, {width}]")
    if len(set(clip.joint_names)) != J:
        twice = sorted({n for n in clip.joint_names if clip.joint_names.count(n) > 1})
        raise UserError(f"{where}: joint names appear twice: {', '.join(twice)}")
    for key in ("base_pos", "base_quat", "joint_pos"):
        bad = np.argwhere(~np.isfinite(getattr(clip, key)))
        if len(bad):
            frame, col = (int(x) for x in bad[0])
            what = f"joint {clip.joint_names[col]}" if key == "joint_pos" else f"column {col}"
            raise UserError(f"{where}: {key} is not finite at frame {frame} ({what}): NaN or inf in the clip")
    norm = np.linalg.norm(clip.base_quat, axis=1)
    off = np.argwhere(np.abs(norm - 1.0) > QUAT_TOLERANCE)
    if len(off):
        f = int(off[0, 0])
        raise UserError(f"{where}: base_quat at frame {f} has norm {norm[f]:.4f}, not 1 (a unit quaternion w x y z "
                        f"is expected; off by more than {QUAT_TOLERANCE} in {len(off)} frames)")
    quat = np.where(np.abs(norm - 1.0)[:, None] > 1e-12, clip.base_quat / norm[:, None], clip.base_quat)
    quat = quat * np.where(quat[:, :1] < 0, -1.0, 1.0)  # w >= 0: one sign per orientation
    return Clip(fps, tuple(str(n) for n in clip.joint_names), np.asarray(clip.base_pos, dtype=np.float64),
                quat, np.asarray(clip.joint_pos, dtype=np.float64), clip.name)


# ------------------------------------------------------------------------------------------------ files
def to_bytes(clip: Clip) -> bytes:
    """The clip as ``.npz`` bytes of our format."""
    buffer = io.BytesIO()
    np.savez(buffer, format=np.array(FORMAT), fps=np.array(float(clip.fps)),
             joint_names=np.array(clip.joint_names, dtype=str), base_pos=clip.base_pos.astype(np.float64),
             base_quat=clip.base_quat.astype(np.float64), joint_pos=clip.joint_pos.astype(np.float64),
             name=np.array(clip.name))
    return buffer.getvalue()


def save(clip: Clip, path: str | Path) -> Path:
    """Write ``clip`` to ``path`` (``.npz``) atomically (a temporary file renamed over it)."""
    path = Path(path)
    if path.suffix != ".npz":
        raise UserError(f"motion clip file {path}: expected a name ending in .npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(to_bytes(clip))
    os.replace(tmp, path)
    return path


def from_arrays(arrays: dict[str, np.ndarray], where: str, name: str = "") -> Clip:
    """A checked clip from the arrays of one of our ``.npz`` files; one line for a missing key or another format."""
    fmt = str(arrays["format"]) if "format" in arrays else None
    if fmt != FORMAT:
        raise UserError(f"{where}: format={fmt!r} is not a legged-mjx motion clip; expected {FORMAT!r}")
    missing = [k for k in ("fps", "joint_names", "base_pos", "base_quat", "joint_pos") if k not in arrays]
    if missing:
        raise UserError(f"{where}: missing array(s) {', '.join(missing)} of the clip format (contract/motion.py)")
    fps = np.asarray(arrays["fps"], dtype=np.float64)
    if fps.size != 1:
        raise UserError(f"{where}: fps holds {fps.size} values; expected one frame rate")
    stored = str(arrays["name"]) if "name" in arrays else ""
    clip = Clip(float(fps.reshape(())), tuple(str(n) for n in np.asarray(arrays["joint_names"]).reshape(-1)),
                np.asarray(arrays["base_pos"], dtype=np.float64), np.asarray(arrays["base_quat"], dtype=np.float64),
                np.asarray(arrays["joint_pos"], dtype=np.float64), stored or name)
    return checked(clip, where)


def from_bytes(data: bytes, where: str, name: str = "") -> Clip:
    """A clip from ``.npz`` bytes of our format."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return from_arrays({k: z[k] for k in z.files}, where, name)


def digest(clip: Clip) -> str:
    """SHA-256 of what the clip holds (frame rate, joint names, arrays as float64): the same clip, the same hash."""
    h = hashlib.sha256(f"{FORMAT};{float(clip.fps)!r};{','.join(clip.joint_names)};".encode())
    for a in (clip.base_pos, clip.base_quat, clip.joint_pos):
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------------------ arithmetic
def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of quaternions ``[..., 4]`` (w x y z)."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotation_vector(q: np.ndarray) -> np.ndarray:
    """The rotation vectors (axis x angle, rad, angle in [0, pi]) of unit quaternions ``[..., 4]``."""
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    return q[..., 1:] * np.where(s > 1e-12, angle / np.maximum(s, 1e-12), 2.0)


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``v [..., 3]`` rotated by unit quaternions ``q [..., 4]`` (R(q) v)."""
    w, xyz = q[..., :1], q[..., 1:]
    t = 2.0 * np.cross(xyz, v)
    return v + w * t + np.cross(xyz, t)


def derivative(x: np.ndarray, dt: float) -> np.ndarray:
    """Rates of ``x [F, ...]`` sampled every ``dt``: central differences inside, one-sided at the two ends."""
    out = np.empty_like(x, dtype=np.float64)
    out[1:-1] = (x[2:] - x[:-2]) / (2.0 * dt)
    out[0] = (x[1] - x[0]) / dt
    out[-1] = (x[-1] - x[-2]) / dt
    return out


def angular_velocity(quat: np.ndarray, dt: float) -> np.ndarray:
    """World-frame angular velocities ``[F, 3]`` (rad/s) of orientations ``quat [F, 4]`` (w x y z, body -> world)
    sampled every ``dt``, by the same differences as ``derivative``."""
    out = np.empty((quat.shape[0], 3))
    out[1:-1] = rotation_vector(quat_mul(quat[2:], quat_conj(quat[:-2]))) / (2.0 * dt)
    out[0] = rotation_vector(quat_mul(quat[1], quat_conj(quat[0]))) / dt
    out[-1] = rotation_vector(quat_mul(quat[-1], quat_conj(quat[-2]))) / dt
    return out


@dataclass(frozen=True)
class Rates:
    """A clip's velocities by finite differences (``velocities``)."""

    base_lin_vel: np.ndarray
    """``[F, 3]`` base linear velocity (m/s, world): MuJoCo's free-joint ``qvel[0:3]``."""
    base_ang_vel: np.ndarray
    """``[F, 3]`` base angular velocity (rad/s, base frame): MuJoCo's free-joint ``qvel[3:6]``."""
    joint_vel: np.ndarray
    """``[F, J]`` joint velocities (rad/s)."""


def velocities(clip: Clip) -> Rates:
    """The base's and joints' velocities of ``clip`` by finite differences (what a reset to a frame starts with)."""
    dt = 1.0 / clip.fps
    ang_world = angular_velocity(clip.base_quat, dt)
    return Rates(derivative(clip.base_pos, dt), rotate(quat_conj(clip.base_quat), ang_world),
                 derivative(clip.joint_pos, dt))
