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


def main(argv: list[str] | None = None) -> int:
    from envs.motion.gait import compare, gait
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
