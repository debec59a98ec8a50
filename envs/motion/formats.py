"""Clip files as users have them, each read into a checked ``contract.motion.Clip``:

- ``.npz`` of our format (``contract/motion.py``: it names its joints);
- ``.npz`` of mjlab's motion format (``fps [1]``, ``joint_pos [T, J]``, ``body_pos_w [T, B, 3]``,
  ``body_quat_w [T, B, 4]`` w x y z, body 0 the floating base; ``joint_vel`` and the body velocities are derived
  again here): its columns are the robot's joints in the robot file's order, which it does not name;
- ``.csv`` of Unitree's retargeted LAFAN1 release (one row per frame, no header: base position x y z, base
  quaternion x y z w, then one angle per joint in the robot file's order; 30 fps).

A file whose columns the robot's joints cannot fill is refused in one line naming both counts; a clip whose joint
names the robot lacks (or that lacks some of the robot's) in one line naming them (``columns_for``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from contract.errors import UserError
from contract.motion import Clip, checked, from_arrays

LAFAN1_FPS = 30.0
"""Frame rate of Unitree's retargeted LAFAN1 CSV files."""
FORMATS = ".npz (legged-mjx or mjlab motion) or .csv (Unitree LAFAN1 retargeting)"
"""What ``load`` reads, for its messages."""


def load(path: str | Path, joint_names: tuple[str, ...], csv_fps: float = LAFAN1_FPS) -> Clip:
    """The clip in ``path``; ``joint_names``: the robot's joints in its file's order (the columns of the formats
    that do not name theirs); ``csv_fps``: the frame rate of a CSV file."""
    path = Path(path)
    where = f"motion clip {path}"
    if not path.is_file():
        raise UserError(f"{where} does not exist (looked at {path.resolve()}; a path in a robot file is relative to "
                        f"that file's folder, one on the command line to the current directory {Path.cwd()})")
    if path.suffix == ".csv":
        return _lafan1(path, where, joint_names, csv_fps)
    if path.suffix != ".npz":
        raise UserError(f"{where}: unknown clip format {path.suffix or '(no suffix)'}; expected {FORMATS}")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise UserError(f"{where} is not a readable .npz file ({type(e).__name__})") from None
    if "format" in arrays:
        return from_arrays(arrays, where, path.stem)
    if "body_pos_w" in arrays and "joint_pos" in arrays:
        return _mjlab(arrays, where, joint_names, path.stem)
    raise UserError(f"{where}: neither a legged-mjx clip (no 'format' array) nor an mjlab motion (no 'body_pos_w'); "
                    f"arrays: {', '.join(sorted(arrays)) or '(none)'}")


def _columns(where: str, found: int, joint_names: tuple[str, ...], what: str) -> None:
    if found != len(joint_names):
        raise UserError(f"{where}: {found} joint columns, but the robot has {len(joint_names)} joints "
                        f"({', '.join(joint_names[:4])}{', ...' if len(joint_names) > 4 else ''}); {what}")


def _lafan1(path: Path, where: str, joint_names: tuple[str, ...], fps: float) -> Clip:
    try:
        rows = np.loadtxt(path, delimiter=",", ndmin=2)
    except ValueError as e:
        raise UserError(f"{where}: not a CSV of numbers ({' '.join(str(e).split())[:80]})") from None
    if rows.shape[1] < 8:
        raise UserError(f"{where}: {rows.shape[1]} columns; a LAFAN1 row is base x y z, quaternion x y z w, then "
                        "one angle per joint")
    _columns(where, rows.shape[1] - 7, joint_names, "a LAFAN1 row holds one angle per joint of the robot, in its "
             "file's order")
    quat = rows[:, [6, 3, 4, 5]]  # x y z w -> w x y z
    return checked(Clip(fps, joint_names, rows[:, :3], quat, rows[:, 7:], path.stem), where)


def _mjlab(arrays: dict[str, np.ndarray], where: str, joint_names: tuple[str, ...], name: str) -> Clip:
    fps = np.asarray(arrays.get("fps", np.array([np.nan])), dtype=np.float64).reshape(-1)
    if fps.size != 1:
        raise UserError(f"{where}: fps holds {fps.size} values; expected one frame rate")
    joint_pos, body_pos, body_quat = (np.asarray(arrays[k], dtype=np.float64)
                                      for k in ("joint_pos", "body_pos_w", "body_quat_w"))
    if joint_pos.ndim != 2 or body_pos.ndim != 3 or body_quat.ndim != 3:
        raise UserError(f"{where}: mjlab arrays joint_pos [T, J], body_pos_w [T, B, 3], body_quat_w [T, B, 4] "
                        f"expected; got {list(joint_pos.shape)}, {list(body_pos.shape)}, {list(body_quat.shape)}")
    _columns(where, joint_pos.shape[1], joint_names, "an mjlab motion's joint_pos holds the robot's joints in its "
             "file's order")
    return checked(Clip(float(fps[0]), joint_names, body_pos[:, 0], body_quat[:, 0], joint_pos, name), where)


def columns_for(clip: Clip, joint_names: tuple[str, ...], where: str) -> np.ndarray:
    """For each of the robot's ``joint_names``, the clip column holding it; one line for clip joints the robot
    lacks or robot joints the clip lacks."""
    extra = [n for n in clip.joint_names if n not in joint_names]
    if extra:
        raise UserError(f"{where}: the robot has no joint(s) {', '.join(extra)} of the clip; its joints: "
                        f"{', '.join(joint_names)}")
    missing = [n for n in joint_names if n not in clip.joint_names]
    if missing:
        raise UserError(f"{where}: the clip has no angle for the robot's joint(s) {', '.join(missing)}; its joints: "
                        f"{', '.join(clip.joint_names)}")
    return np.array([clip.joint_names.index(n) for n in joint_names], dtype=np.int64)
