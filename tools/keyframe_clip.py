"""Make a keyframe clip: joint-space splines between poses you list, the base placed so the stance feet stay on the
floor (``envs/motion/keyframes.py``), written in our clip format (``contract/motion.py``).

    python -m tools.keyframe_clip --preset squat_wave --out squat_wave.npz           # the built-in humanoid
    python -m tools.keyframe_clip --keys my_keys.yaml --robot path/to/robot.py:ROBOT --out my_clip.npz

A keys file (YAML)::

    name: bow
    fps: 50                      # frames per second (default 50)
    stance: [left_foot, right_foot]   # feet that stay on the floor (default: every foot)
    keys:
      - {t: 0}                   # the robot's default pose
      - {t: 1.5, pose: {".*_hip_pitch_joint": -0.6, ".*_knee_joint": 0.4}}
      - {t: 3.0, pose: {".*_hip_pitch_joint": -0.15, ".*_knee_joint": 0.3}, yaw: 0.5}

Every joint of the robot's file is in the clip (held joints too: a clip drives every joint); ``--robot``: a
built-in robot (humanoid, quadruped) or ``FILE.py:NAME``, a ``RobotSpec`` in a robot file.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BUILT_IN = {"humanoid": ("envs.robots.humanoid", "HUMANOID"), "quadruped": ("envs.robots.quadruped", "QUADRUPED")}
"""``--robot`` names of the built-in robots: module, attribute."""


def robot_spec(ref: str) -> Any:
    """The RobotSpec ``ref`` names (a built-in robot or ``FILE.py:NAME``); one line when it names none."""
    from contract.errors import UserError
    from envs.robots.spec import RobotSpec

    if ref in BUILT_IN:
        module, attr = BUILT_IN[ref]
        return getattr(importlib.import_module(module), attr)
    file, _, attr = ref.rpartition(":")
    if not file.endswith(".py") or not Path(file).is_file():
        raise UserError(f"--robot={ref} is not allowed; expected {', '.join(BUILT_IN)} or FILE.py:NAME (an "
                        "existing robot file)")
    loader = importlib.util.spec_from_file_location("keyframe_robot", file)
    assert loader is not None and loader.loader is not None
    robot_file = importlib.util.module_from_spec(loader)
    sys.modules["keyframe_robot"] = robot_file
    loader.loader.exec_module(robot_file)
    spec = getattr(robot_file, attr, None)
    if not isinstance(spec, RobotSpec):
        raise UserError(f"--robot={ref}: {file} has no RobotSpec named {attr}")
    return spec


def read_keys(path: str) -> Any:
    """A ``Keyframes`` from a keys file (see the module docstring); one line for a malformed one."""
    import yaml

    from contract.errors import UserError
    from envs.motion.keyframes import Key, Keyframes

    try:
        raw = yaml.safe_load(Path(path).read_text())
        keys = tuple(Key(float(k["t"]), tuple((str(n), float(a)) for n, a in (k.get("pose") or {}).items()),
                         None if k.get("yaw") is None else float(k["yaw"])) for k in raw["keys"])
        return Keyframes(str(raw.get("name", Path(path).stem)), keys, float(raw.get("fps", 50.0)),
                         tuple(str(f) for f in raw.get("stance", ())))
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise UserError(f"--keys={path}: not a keys file ({type(e).__name__}: {' '.join(str(e).split())[:80]}); "
                        "see python -m tools.keyframe_clip --help") from None


def main(argv: list[str] | None = None) -> int:
    from contract.errors import OneLineParser, UserError, run_reporting_errors

    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", help="a built-in recipe: squat_wave (the built-in humanoid)")
    p.add_argument("--keys", help="a keys file (YAML, see --help)")
    p.add_argument("--robot", default="humanoid", help="humanoid (default), quadruped or FILE.py:NAME")
    p.add_argument("--out", required=True, help="the clip file to write (.npz)")
    p.add_argument("--debug", action="store_true", help="tracebacks instead of one-line errors")
    args = p.parse_args(argv)

    def run() -> int:
        from contract import motion
        from envs.motion.keyframes import PRESETS, make_clip
        from envs.motion.robot import build_tracking

        if (args.preset is None) == (args.keys is None):
            raise UserError("give one of --preset NAME or --keys FILE")
        if args.preset is not None and args.preset not in PRESETS:
            raise UserError(f"--preset={args.preset} is not allowed; expected one of {', '.join(PRESETS)}")
        if not args.out.endswith(".npz"):
            raise UserError(f"--out={args.out} is not allowed; expected a file name ending in .npz")
        recipe = PRESETS[args.preset] if args.preset else read_keys(args.keys)
        clip = make_clip(recipe, build_tracking(robot_spec(args.robot)))
        motion.save(clip, args.out)
        print(f"wrote {args.out}: {clip.name}, {clip.frames} frames at {clip.fps:g} fps ({clip.duration:.2f} s), "
              f"{len(clip.joint_names)} joints, base height {clip.base_pos[:, 2].min():.3f}-"
              f"{clip.base_pos[:, 2].max():.3f} m, sha256 {motion.digest(clip)[:12]}")
        return 0

    return run_reporting_errors(run, args.debug)


if __name__ == "__main__":
    sys.exit(main())
