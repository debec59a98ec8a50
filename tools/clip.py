"""Look at, cut, convert and replay motion clips (the formats ``envs/motion/formats.py`` reads):

    python -m tools.clip inspect walk.csv --robot menagerie:unitree_g1     # frames, rate, speeds, tilt, feet
    python -m tools.clip trim walk.csv --seconds 2:12 --out walk10.csv     # or --frames 60:361
    python -m tools.clip convert walk.csv --robot menagerie:unitree_g1 --out walk.npz
    python -m tools.clip convert walk.csv --robot menagerie:unitree_g1 --out walk_mjlab.npz --format mjlab
    python -m tools.clip replay walk.csv --robot menagerie:unitree_g1 --out walk.mp4   # 320x240, MUJOCO_GL=egl

``--robot``: ``menagerie:NAME[@ENTRY]`` (the drafted spec), ``FILE.py:NAME`` (a ``RobotSpec`` in a robot file),
``humanoid`` or ``quadruped``. A .csv / mjlab .npz names no joints: with a robot its columns are the robot file's
joints in order (welded ones included), without one they are called joint_1, joint_2, ... (trim keeps the order).
``--csv-fps``: a .csv clip's frame rate (LAFAN1: 30). Errors are one line (exit status 2).
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

FOOT_LIFT = 0.02
"""m: a foot whose lowest point is higher than this over the floor is counted as in the air (``inspect``)."""


def robot(ref: str | None) -> Any:
    """The RobotSpec ``--robot`` names (None without one)."""
    if ref is None:
        return None
    if ref.startswith("menagerie:"):
        from envs.robots.draft import draft
        from envs.robots.menagerie import parse, xml_path

        parsed = parse(ref)
        return draft(xml_path(parsed), parsed.robot_id.replace("@", "_")).spec
    from tools.keyframe_clip import robot_spec

    return robot_spec(ref)


def _column_count(path: Path) -> int:
    """Joint columns of a file that does not name its joints (0 when it names them or cannot be read)."""
    try:
        if path.suffix == ".csv":
            return max(len(path.open().readline().split(",")) - 7, 0)
        with np.load(path, allow_pickle=False) as z:
            return int(z["joint_pos"].shape[1]) if "joint_pos" in z.files and "format" not in z.files else 0
    except (OSError, ValueError, KeyError, IndexError):
        return 0


def read(path: str, spec: Any, csv_fps: float) -> Any:
    """The clip at ``path``, its columns named by ``spec``'s file (module docstring)."""
    from envs.motion import formats
    from envs.motion.robot import file_joints

    names = file_joints(spec.mjcf) if spec is not None else tuple(
        f"joint_{k + 1}" for k in range(_column_count(Path(path))))
    return formats.load(path, names, csv_fps)


def inspect(clip: Any, spec: Any, csv_fps: float) -> list[str]:
    """The lines of ``inspect``."""
    from contract.motion import velocities
    from envs.motion import plausible

    f = plausible.facts(clip)
    speeds = np.linalg.norm(velocities(clip).base_lin_vel, axis=1) if clip.frames > 1 else np.zeros(1)
    lines = [f"{clip.name}: {clip.frames} frames at {clip.fps:g} fps = {clip.duration:.3f} s, "
             f"{len(clip.joint_names)} joints",
             f"first frame: base at {np.round(clip.base_pos[0], 3).tolist()} m, tilted "
             f"{math.degrees(f.tilt):.0f} degrees from upright",
             f"base speed: mean {speeds.mean():.2f} m/s, max {f.base_speed:.2f} m/s; fastest joint: "
             f"{f.fastest_joint or '-'} at {f.joint_speed:.1f} rad/s"]
    if spec is None:
        return lines + ["give --robot for joint ranges, foot heights and the plausibility checks"]
    return lines + _with_robot(clip, spec, csv_fps)


def _with_robot(clip: Any, spec: Any, csv_fps: float) -> list[str]:
    """The lines ``inspect`` adds with a robot: the lowest point over the floor, each foot's height over it, and
    the plausibility checks as training runs them (the robot with every joint of its file trained: its ranges
    and velocity limits)."""
    from contract.errors import UserError
    from envs.motion import plausible
    from envs.motion.edit import lowest_points
    from envs.motion.replay import replay
    from envs.motion.robot import build_tracking, file_joints, welded_names

    rb = build_tracking(spec, release=tuple(welded_names(spec, file_joints(spec.mjcf))))
    model = rb.model
    ref = replay(model, clip, (), f"motion clip {clip.name}")
    geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0 and (model.geom_contype[g]
             or model.geom_conaffinity[g]) and int(model.geom_group[g]) not in spec.visual_groups]
    low, body = lowest_points(model, ref.qpos, geoms)
    names, counts = np.unique(body, return_counts=True)
    often = ", ".join(f"{model.body(int(b)).name} {c / len(body):.0%}" for b, c in
                      sorted(zip(names, counts, strict=True), key=lambda x: -x[1])[:4])
    feet = []
    for name, ids in zip(rb.foot_names, rb.foot_geom_ids, strict=True):
        h = lowest_points(model, ref.qpos, list(ids))[0]
        feet.append(f"{name} min {h.min():+.3f} / median {np.median(h):+.3f} / max {h.max():+.3f} m, above "
                    f"{FOOT_LIFT * 100:g} cm {np.mean(h > FOOT_LIFT):.0%}")
    try:
        plausible.check(clip, f"motion clip {clip.name}", plausible.joint_ranges(rb, clip.joint_names),
                        plausible.speed_limits(rb), csv_fps)
        verdict = "plausible (tilt, frame rate, speeds, joint ranges)"
    except UserError as e:
        verdict = str(e)
    return [f"lowest point over the floor: min {low.min():+.3f} m, median {np.median(low):+.3f} m, max "
            f"{low.max():+.3f} m; lowest body: {often}", f"feet over the floor: {'; '.join(feet) or '(no feet)'}",
            f"check: {verdict}"]


def replay_video(path: str, spec: Any, out: str, size: tuple[int, int], fps: float, csv_fps: float,
                 quality: str = "auto") -> str:
    """The clip at ``path`` on ``spec``'s robot in the task's scene, written to ``out`` at ``quality``
    (``apps/render_cost.py``); a line with the cost of a frame (and how it was drawn, when lightened)."""
    from apps.video import VideoRecorder
    from contract.errors import UserError
    from envs.motion.replay import replay
    from envs.tasks.track.clips import load_clips
    from envs.tasks.track.config import TrackEnvConfig
    from envs.tasks.track.robot import tracking_robot

    if spec is None:
        raise UserError("replay needs --robot (the robot the clip drives)")
    if not out.endswith(".mp4"):
        raise UserError(f"--out={out} is not allowed; expected a file name ending in .mp4")
    cfg = TrackEnvConfig(clips=(path,), csv_fps=csv_fps)
    rb = tracking_robot(spec, cfg)
    clip = load_clips(cfg.clips, rb, fps, csv_fps, check=False)[0].clip
    ref = replay(rb.model, clip, (), f"motion clip {path}")
    video = VideoRecorder(rb.model, size[0], size[1], camera=rb.camera, quality=quality)
    start = time.perf_counter()
    try:
        for f, q in enumerate(ref.qpos):
            video.add(q, f"{clip.name} {f / clip.fps:5.2f} s")
        seconds = time.perf_counter() - start
        video.save(out, clip.fps)
    finally:
        video.close()
    light = video.choice.line if video.choice is not None and video.choice.line else ""
    return ((light + "\n" if light else "") + f"wrote {out}: {ref.frames} frames at {clip.fps:g} fps, "
            f"{size[0]}x{size[1]}, {seconds / max(ref.frames, 1):.3f} s of rendering per frame")


def _parser() -> Any:
    from contract.errors import OneLineParser

    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--debug", action="store_true", help="tracebacks instead of one-line errors")
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (("inspect", "frames, rate, duration, speeds, first frame's tilt (feet and checks: --robot)"),
                       ("trim", "keep a frame range (--frames A:B) or a time range (--seconds A:B)"),
                       ("convert", "write the clip in another format (.npz ours or mjlab's, .csv LAFAN1)"),
                       ("replay", "a video of the clip on --robot (MUJOCO_GL=egl offscreen)")):
        c = sub.add_parser(name, help=text, description=text)
        c.add_argument("clip", help="a .csv (LAFAN1) or .npz (legged-mjx or mjlab) clip")
        c.add_argument("--robot", help="menagerie:NAME[@ENTRY], FILE.py:NAME, humanoid or quadruped")
        c.add_argument("--csv-fps", type=float, default=30.0, help="frame rate of a .csv clip (LAFAN1: 30)")
        if name != "inspect":
            c.add_argument("--out", required=True, help="the file to write (.npz, .csv; replay: .mp4)")
        if name == "trim":
            c.add_argument("--frames", help="A:B, frames A (included) to B (excluded), as a Python slice")
            c.add_argument("--seconds", help="A:B, the frames whose time lies in [A, B] s")
        if name in ("trim", "convert"):
            c.add_argument("--format", choices=("ours", "mjlab"), default="ours",
                           help="a .npz OUT: ours (names its joints) or mjlab's motion format (every body's pose; "
                                "needs --robot)")
        if name == "replay":
            c.add_argument("--size", default="320x240", help="video width x height (default 320x240)")
            c.add_argument("--fps", type=float, default=30.0, help="video frame rate (default 30)")
            c.add_argument("--quality", choices=("auto", "full", "light"), default="auto",
                           help="shadows and reflections drawn (full), not (light), or not when a frame costs over "
                                "0.25 s (auto)")
    return p


def _mjlab_model(spec: Any, fmt: str) -> Any:
    """The robot file's model that mjlab's format needs (None for ours)."""
    if fmt != "mjlab":
        return None
    import mujoco

    from contract.errors import UserError

    if spec is None:
        raise UserError("--format mjlab needs --robot (mjlab's .npz holds every body's pose, from the robot file)")
    return mujoco.MjModel.from_xml_path(str(spec.mjcf))


def main(argv: list[str] | None = None) -> int:
    from contract.errors import UserError, run_reporting_errors

    args = _parser().parse_args(argv)
    if args.command == "replay":
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering; must be set before mujoco is imported

    def run() -> int:
        from envs.motion.edit import frame_range, trimmed, write

        spec = robot(args.robot)
        if args.command == "replay":
            w, _, h = args.size.partition("x")
            if not (w.isdigit() and h.isdigit()):
                raise UserError(f"--size={args.size} is not allowed; expected WIDTHxHEIGHT, e.g. 320x240")
            print(replay_video(args.clip, spec, args.out, (int(w), int(h)), args.fps, args.csv_fps,
                               args.quality))
            return 0
        clip = read(args.clip, spec, args.csv_fps)
        if args.command == "inspect":
            print("\n".join(inspect(clip, spec, args.csv_fps)))
            return 0
        if args.out.endswith(".npz") and spec is None and args.format == "ours" and _column_count(Path(args.clip)):
            raise UserError(f"--out={args.out}: our .npz names its joints and {args.clip} does not; give --robot "
                            "(its file's joints name the columns)")
        if args.command == "trim":
            first, end = frame_range(clip, args.frames, args.seconds)
            clip = trimmed(clip, first, end)
            print(f"frames {first} to {end - 1} of {args.clip}: {clip.frames} frames = {clip.duration:.3f} s")
        print(f"wrote {write(clip, args.out, _mjlab_model(spec, args.format))}")
        return 0

    return run_reporting_errors(run, args.debug)


if __name__ == "__main__":
    sys.exit(main())
