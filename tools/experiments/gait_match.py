"""How close a rollout's gait is to a reference clip's: duty factor per foot and the feet's relative phases, both read
from the clips' kinematics alike (docs/motion.md's AMP numbers).

    python -m tools.experiments.gait_match --reference trot.npz --clip a.npz [b.npz ...] [--robot quadruped]
        [--json g.json]

Both files are motion clips (``play.py --record-motion``). For each frame the robot is posed (forward kinematics in
its scene) and a foot is on the ground while its collision geom's lowest point is within ``--contact-height`` of
the floor. Duty factor: a foot's share of frames on the ground. Phase of foot B after foot A: for each touchdown of
A, the time to B's next touchdown over A's stride period (the median time between A's touchdowns), averaged on the
circle over every touchdown of every clip given, in [0, 1): a trot's diagonal pairs are near 0 (together), its
lateral pairs near 0.5. The comparison: each duty factor's difference relative to the reference's, and each
phase's circular distance from the reference's (the issue's threshold: within 0.1 each). ``--skip`` seconds at the
start of each clip (the start from standing) are left out; several clips (recordings with different seeds) pool
their frames and touchdowns.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import mujoco
import numpy as np


def contacts(path: str, robot: Any, height: float) -> tuple[np.ndarray, float]:
    """``[F, feet]`` bool: each foot on the ground in each frame of the clip at ``path``, and the clip's fps."""
    from contract import motion
    from envs.motion.keyframes import lowest_point
    from envs.motion.replay import replay

    with open(path, "rb") as fh:
        clip = motion.from_bytes(fh.read(), path)
    ref = replay(robot.model, clip, (), path)
    data = mujoco.MjData(robot.model)
    out = np.zeros((clip.frames, robot.num_feet), dtype=bool)
    for f in range(clip.frames):
        data.qpos[:] = ref.qpos[f]
        mujoco.mj_kinematics(robot.model, data)
        for k, geoms in enumerate(robot.foot_geom_ids):
            out[f, k] = min(lowest_point(robot.model, data, g) for g in geoms) < height
    return out, clip.fps


def phase_angles(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Angles (rad) of foot ``b``'s touchdowns after each of foot ``a``'s over ``a``'s stride (``[F]`` bool contact
    signals of one clip); none where ``a`` touches down fewer than 3 times."""
    down_a = np.flatnonzero(a[1:] & ~a[:-1]) + 1
    down_b = np.flatnonzero(b[1:] & ~b[:-1]) + 1
    if len(down_a) < 3 or len(down_b) < 1:
        return []
    period = float(np.median(np.diff(down_a)))
    angles = []
    for t in down_a[:-1]:
        later = down_b[down_b >= t]
        if len(later):
            angles.append(2 * math.pi * ((later[0] - t) / period % 1.0))
    return angles


def circular_mean(angles: list[float]) -> float | None:
    """The mean of angles (rad) on the circle as a share of a turn in [0, 1); None for no angles."""
    if not angles:
        return None
    mean = math.atan2(np.mean(np.sin(angles)), np.mean(np.cos(angles)))
    return (mean / (2 * math.pi)) % 1.0


def gait(signals: list[np.ndarray], feet: tuple[str, ...]) -> dict[str, Any]:
    """Duty factor per foot and the phase of every other foot after the first, pooled over clips' ``[F, feet]``
    contact signals (all their frames, all their touchdowns)."""
    every = np.concatenate(signals)
    return {"duty_factor": {f: float(every[:, k].mean()) for k, f in enumerate(feet)},
            "phase_after_" + feet[0]: {
                f: circular_mean([x for s in signals for x in phase_angles(s[:, 0], s[:, k])])
                for k, f in enumerate(feet) if k}}


def compare(ref: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """Relative duty-factor differences and circular phase distances (None where a phase is undefined)."""
    duty = {f: abs(got["duty_factor"][f] - d) / d for f, d in ref["duty_factor"].items()}
    key = next(k for k in ref if k.startswith("phase_after_"))
    phases = {}
    for f, p in ref[key].items():
        q = got[key][f]
        phases[f] = None if p is None or q is None else min(abs(p - q), 1 - abs(p - q))
    worst = max([*duty.values(), *(v for v in phases.values() if v is not None)])
    return {"duty_factor_rel_diff": duty, "phase_diff": phases, "worst": worst, "within_10_percent": worst <= 0.1}


def main(argv: list[str] | None = None) -> int:
    from envs.motion.robot import build_tracking
    from tools.keyframe_clip import robot_spec

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", required=True, nargs="+", help="the reference clip(s) (.npz), pooled")
    p.add_argument("--clip", required=True, nargs="+", help="the rollout's clip(s) (.npz), pooled")
    p.add_argument("--robot", default="quadruped", help="quadruped (default), humanoid or FILE.py:NAME")
    p.add_argument("--contact-height", type=float, default=0.01, help="a foot within this of the floor is down (m)")
    p.add_argument("--skip", type=float, default=1.0,
                   help="seconds left out at the start of both clips (the start from standing; default 1)")
    p.add_argument("--json", help="write the result here")
    args = p.parse_args(argv)
    robot = build_tracking(robot_spec(args.robot))
    out: dict[str, Any] = {}
    for name, paths in (("reference", args.reference), ("rollout", args.clip)):
        signals = []
        for path in paths:
            signal, fps = contacts(path, robot, args.contact_height)
            signals.append(signal[int(round(args.skip * fps)):])
        out[name] = {"clips": paths, "frames": sum(len(s) for s in signals), **gait(signals, robot.foot_names)}
    out["comparison"] = compare(out["reference"], out["rollout"])
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
