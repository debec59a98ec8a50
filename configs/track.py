"""Motion tracking (``envs/tasks/track/``) for any ``RobotSpec``, every joint of its file trained:

    track = track_task("my-robot-track", MY_ROBOT, TrackEnvConfig(clips=("dance.npz",)))   # in my_robot.py
    python train.py --task path/to/my_robot.py:track [env.clips=[walk.npz,jump.csv]]

``humanoid-track``: the built-in humanoid (20 joints, arms included) on the squat with an arm wave
(``keyframes:squat_wave``), its torso the anchor; ``env.clips=[clip.npz]`` swaps the clips (docs/motion.md).

Learner settings: the flat locomotion task's PPO (adaptive KL, 24 steps per env, 5 epochs x 4 minibatches) with
wider networks for the 179-value observation (BeyondMimic uses 512-256-128 on a GPU; 256-128-64 here), an initial
action noise of 0.5 (a humanoid falls within a second under 1.0) and mjlab's entropy weight 0.005. On the CPU 1024
envs (native MuJoCo).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Optional

import torch

from configs.locomotion import beside, flat_config
from configs.task_defaults import TaskDefaults, apply_defaults, robot_defaults
from envs.registry import TaskSpec, own_task_or_sole_spec, register, remember
from envs.robots.humanoid import HUMANOID
from envs.robots.spec import RobotSpec
from envs.tasks.track import TrackEnv, TrackEnvConfig
from envs.tasks.track.config import TrackRewardParams, TrackRewardScales
from rl_core.config import EnvConfig, PolicyConfig, TrainConfig


def track_config(env: Optional[TrackEnvConfig] = None, gpu: Optional[bool] = None) -> TrainConfig:
    """The tracking learner settings on ``env`` (num_envs: 4096 on a GPU, 1024 on a CPU)."""
    gpu = torch.cuda.is_available() if gpu is None else gpu
    env = dataclasses.replace(env or TrackEnvConfig(), num_envs=4096 if gpu else 1024)
    base = flat_config(gpu=gpu)
    return dataclasses.replace(
        base, env=env,
        policy=PolicyConfig(actor_hidden_dims=(256, 128, 64), critic_hidden_dims=(256, 128, 64), activation="elu",
                            init_noise_std=0.5, min_std=0.02, max_std=2.0, orthogonal_init=False),
        algorithm=dataclasses.replace(base.algorithm, entropy_coef=0.005),
        runner=dataclasses.replace(base.runner, max_iterations=3000 if gpu else 500, save_interval=50 if gpu else 25))


def track_task(name: str, robot: RobotSpec, env: Optional[TrackEnvConfig] = None, description: str = "",
               defaults: Optional[TaskDefaults] = None, clip_dir: Optional[Path] = None) -> TaskSpec:
    """The tracking task for ``robot`` (its defaults: ``track_config(env)``, then ``defaults``). The robot and the
    clips are checked before anything is written (``TaskSpec.validate``): a bad name, file or clip is one line.

    Relative clip paths of ``env`` are resolved against ``clip_dir``, by default the folder of the file that calls
    this (a robot file's clips sit beside it); ``env.clips=[...]`` on the command line stays relative to the
    current directory."""
    defaults = robot_defaults(robot, defaults)
    if clip_dir is None:
        caller = sys._getframe(1).f_globals.get("__file__")
        clip_dir = Path(caller).resolve().parent if caller else None
    if env is not None and clip_dir is not None:
        env = dataclasses.replace(env, clips=tuple(beside(c, clip_dir) for c in env.clips))

    def make_env(cfg: EnvConfig, device: torch.device) -> TrackEnv:
        assert isinstance(cfg, TrackEnvConfig)
        return TrackEnv(cfg, robot, device)

    def validate(cfg: EnvConfig) -> None:
        from envs.tasks.track.clips import load_clips
        from envs.tasks.track.robot import tracking_robot

        assert isinstance(cfg, TrackEnvConfig)
        resolved = tracking_robot(robot, cfg)
        load_clips(cfg.clips, resolved, 1.0 / (cfg.decimation * resolved.model.opt.timestep), cfg.csv_fps,
                   cfg.check_clips)

    return TaskSpec(name, make_env, lambda: apply_defaults(track_config(env), defaults),
                    description or f"{robot.name} reproducing motion clips, every joint trained", validate=validate,
                    machine_defaults=lambda gpu: apply_defaults(track_config(env, gpu), defaults), robot=robot)


DRAFTED_TRACK_ENV = TrackEnvConfig(rewards=TrackRewardScales(anchor_pos=2.0),
                                   reward_params=TrackRewardParams(anchor_pos=1.0))
"""The tracking env of a robot by name or a robot file without a ``track`` task of its own: the default terms with
the anchor's position kernel widened from mjlab's (0.3 m)^2 to (1 m)^2 and weighted 2.0 instead of 0.5. With
mjlab's, the G1-style model by name stood still on a 0.4 m/s walk (its reward has no slope once the reference is
half a metre away: anchor error 0.93 m at 22 minutes); with these it followed the walk (docs/motion.md)."""


def drafted_track_task(name: str, robot: RobotSpec) -> TaskSpec:
    """The tracking task of a robot by name or of a robot file without a ``track`` task of its own:
    ``DRAFTED_TRACK_ENV`` (the clips from ``env.clips=[...]``; the anchor by ``envs/tasks/track/robot.py``'s rule)."""
    return track_task(name, robot, DRAFTED_TRACK_ENV, description=f"{robot.name} reproducing the clips of env.clips",
                      clip_dir=Path.cwd())


def file_track_task(ref: str) -> TaskSpec:
    """``path/to/robot.py:track``: the file's own ``track`` task, else the tracking task of the one ``RobotSpec``
    the file defines (``drafted_track_task``); one line when it defines none or several."""
    robot = own_task_or_sole_spec(ref, "track", "track = track_task(...) (configs/track.py)")
    return robot if not isinstance(robot, RobotSpec) else remember(drafted_track_task(ref, robot))


HUMANOID_TRACK_ENV = TrackEnvConfig(clips=("keyframes:squat_wave",), anchor_body="torso")
"""The built-in humanoid's tracking env: the squat with an arm wave, the torso as anchor."""

TASK = register(track_task("humanoid-track", HUMANOID, HUMANOID_TRACK_ENV,
                           description="humanoid (20 joints, arms included) reproducing motion clips (default: a "
                                       "squat with an arm wave)"))
"""``humanoid-track``."""
