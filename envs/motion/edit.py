"""Clips cut and written in the formats ``formats.py`` reads: a frame or time range (Unitree's converter has
``--frame_range``), our ``.npz`` and Unitree's LAFAN1 ``.csv`` (base x y z, quaternion x y z w, one angle per
joint in the clip's joint order: give the robot file's order when it is read back), mjlab's motion .npz (every
body's pose, from the robot file's model); where a clip stands on its
robot's floor (the lowest point of its collision geoms, frame by frame)."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np

from contract import motion
from contract.errors import UserError
from contract.motion import Clip
from envs.motion.replay import model_joints, replay
from envs.robots.draft_pose import lowest_point


def frame_range(clip: Clip, frames: str | None = None, seconds: str | None = None) -> tuple[int, int]:
    """``[first, end)`` of ``frames`` ``A:B`` (Python slice: A included, B not, either may be empty) or of
    ``seconds`` ``A:B`` (the frames whose time lies in [A, B]); one line for a bad or empty range."""
    if (frames is None) == (seconds is None):
        raise UserError("give one of --frames A:B or --seconds A:B")
    text, what = (frames, "--frames") if frames is not None else (seconds, "--seconds")
    assert text is not None
    a_text, sep, b_text = text.partition(":")
    try:
        a = float(a_text) if a_text else None
        b = float(b_text) if b_text else None
    except ValueError:
        a = b = math.nan
    if not sep or (a is not None and not math.isfinite(a)) or (b is not None and not math.isfinite(b)):
        raise UserError(f"{what}={text} is not allowed; expected A:B (numbers, either may be left out)")
    if frames is not None:
        first, end = slice(None if a is None else int(a), None if b is None else int(b)).indices(clip.frames)[:2]
    else:
        t = np.arange(clip.frames) / clip.fps
        inside = np.nonzero((t >= (a if a is not None else -math.inf) - 1e-9)
                            & (t <= (b if b is not None else math.inf) + 1e-9))[0]
        first, end = (int(inside[0]), int(inside[-1]) + 1) if inside.size else (0, 0)
    if end - first < 2:
        raise UserError(f"{what}={text} keeps {max(end - first, 0)} frame(s) of the clip's {clip.frames} "
                        f"({clip.duration:.3f} s at {clip.fps:g} fps); a clip needs 2 or more")
    return first, end


def trimmed(clip: Clip, first: int, end: int) -> Clip:
    """Frames ``[first, end)`` of ``clip``."""
    return Clip(clip.fps, clip.joint_names, clip.base_pos[first:end], clip.base_quat[first:end],
                clip.joint_pos[first:end], clip.name)


def write(clip: Clip, path: str | Path, mjlab: mujoco.MjModel | None = None) -> Path:
    """``clip`` as ``path``'s suffix says: ``.npz`` (ours; mjlab's motion format with ``mjlab``, the robot file's
    model) or ``.csv`` (LAFAN1); one line for another suffix."""
    path = Path(path)
    if path.suffix == ".npz" and mjlab is not None:
        return _write_mjlab(clip, path, mjlab)
    if path.suffix == ".npz":
        return motion.save(clip, path)
    if path.suffix == ".csv" and mjlab is None:
        rows = np.concatenate([clip.base_pos, clip.base_quat[:, [1, 2, 3, 0]], clip.joint_pos], axis=1)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savetxt(path, rows, delimiter=",", fmt="%.9g")
        return path
    raise UserError(f"--out={path} is not allowed; expected a file name ending in .npz (legged-mjx, or mjlab's "
                    "with --format mjlab) or .csv (LAFAN1)")


def _write_mjlab(clip: Clip, path: Path, model: mujoco.MjModel) -> Path:
    """mjlab's motion .npz (``formats.py`` reads it back): ``fps [1]``, ``joint_pos`` / ``joint_vel [T, J]`` in the
    file's joint order, ``body_pos_w`` / ``body_quat_w`` (w x y z) / ``body_lin_vel_w`` / ``body_ang_vel_w
    [T, B, 3|4]`` of every body of the robot in the file's order, body 0 the floating base (velocities by finite
    differences, ``replay.py``)."""
    where = f"motion clip {clip.name}"
    ref = replay(model, clip, tuple(range(1, model.nbody)), where)
    _, joints = model_joints(model, where)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        np.savez(f, fps=np.array([clip.fps]), joint_pos=ref.qpos[:, model.jnt_qposadr[joints]],
                 joint_vel=ref.qvel[:, model.jnt_dofadr[joints]], body_pos_w=ref.body_pos, body_quat_w=ref.body_quat,
                 body_lin_vel_w=ref.body_lin_vel, body_ang_vel_w=ref.body_ang_vel)
    return path


def lowest_points(model: mujoco.MjModel, qpos: np.ndarray, geoms: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per frame of ``qpos [F, nq]``: the height of the lowest point of ``geoms`` (m; exact for spheres, capsules,
    cylinders, ellipsoids and boxes, a mesh by its bounding box: ``envs/robots/draft_pose.py``) and the body that
    holds it."""
    data = mujoco.MjData(model)
    low, body = np.zeros(len(qpos)), np.zeros(len(qpos), dtype=np.int64)
    for f, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        best, where = math.inf, 0
        for g in geoms:
            z = lowest_point(model, data, g)
            if z < best:
                best, where = z, int(model.geom_bodyid[g])
        low[f], body[f] = best, where
    return low, body
