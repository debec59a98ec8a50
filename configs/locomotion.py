"""Velocity tracking for any ``RobotSpec``, on flat ground (``flat_task``) or generated terrain (``rough_task``).

    flat = flat_task("my-robot-flat", MY_ROBOT)                         # in my_robot.py
    python train.py --task path/to/my_robot.py:flat                      # no project file edited

Defaults pick the machine's fastest setup. On a GPU: MuJoCo Warp physics (MJX without it), 4096 envs
(legged_gym's batch). On a CPU:
native MuJoCo, 1024 envs. On two cores the samples/s barely change between 512 and 2048 envs (16k to 19k),
while a smaller batch gives more PPO updates per sample: 2048 envs need 5.5M samples to the tracking threshold,
1024 need 3.6M, 512 need 2.6-3.0M but their evaluated fall rate swings between 2% and 8% (docs/tasks.md, "Why 1024
envs on the CPU"; ``quadruped-flat`` takes 512 with a cheaper air-time reward: ``configs/quadruped.py``).
Reward weights, gains and action scale that depend on a robot's mass and size belong in its file: pass
``env=LocomotionEnvConfig(rewards=RewardScales(...))`` and set gains in its RobotSpec; learner settings it
needs (init noise, symmetry, network sizes) go in ``defaults=TaskDefaults(...)``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Optional

import torch

from configs.task_defaults import TaskDefaults, apply_defaults, robot_defaults
from envs.registry import TaskSpec
from envs.robots.sides import check_declared
from envs.robots.spec import RobotSpec
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import CommandConfig, LocomotionEnvConfig, RandomizationConfig, RewardScales
from envs.terrain.config import HeightScanConfig, TerrainConfig
from rl_core.config import AlgorithmConfig, EnvConfig, PolicyConfig, RunnerConfig, TrainConfig


def flat_config(env: Optional[LocomotionEnvConfig] = None, gpu: Optional[bool] = None) -> TrainConfig:
    """legged_gym's flat-terrain settings; ``env`` replaces the env section but its num_envs (the machine's:
    4096 on a GPU, 1024 on a CPU; ``--num-envs`` sets it). ``gpu``: the machine to pick defaults for (None:
    this one)."""
    gpu = torch.cuda.is_available() if gpu is None else gpu
    env = dataclasses.replace(env or LocomotionEnvConfig(), num_envs=4096 if gpu else 1024)
    return TrainConfig(
        env=env,
        # torch's default init, as rsl_rl: with the orthogonal init's 0.01 actor output gain the first 100
        # iterations learned about half as fast (same seed, 1024 envs: errors 0.38 vs 0.52 m/s at iteration 100).
        policy=PolicyConfig(actor_hidden_dims=(128, 64, 32), critic_hidden_dims=(128, 64, 32), activation="elu",
                            init_noise_std=1.0, min_std=0.05, max_std=2.0, orthogonal_init=False),
        algorithm=AlgorithmConfig(num_learning_epochs=5, num_mini_batches=4, clip_param=0.2, gamma=0.99, lam=0.95,
                                  learning_rate=1e-3, schedule="adaptive", desired_kl=0.01, entropy_coef=0.01),
        runner=RunnerConfig(num_steps_per_env=24, max_iterations=1500 if gpu else 300, save_interval=50 if gpu else 25,
                            device="cuda" if gpu else "cpu"),
    )


ROUGH_ENV = LocomotionEnvConfig(
    terrain=TerrainConfig(type="generated"), height_scan=HeightScanConfig(enabled=True), privileged_critic=True,
    commands=CommandConfig(heading=True), rewards=RewardScales(orientation=0.0))
"""legged_gym's rough-terrain changes to the flat task: generated tiles with the curriculum, the height scan,
heading commands (robots walk straight, so the curriculum's distances mean something), no orientation penalty
(slopes need the body to tilt), and the privileged critic."""


def rough_config(env: Optional[LocomotionEnvConfig] = None, gpu: Optional[bool] = None) -> TrainConfig:
    """The flat settings on ``env`` (default ``ROUGH_ENV``), with wider networks for the 235-value observation,
    no observation normalizer, and a longer budget.

    Without a normalizer the observations keep legged_gym's fixed scales (as in legged_gym and Isaac Lab). With
    one, the 187 scan values on the flat low levels, where they are mostly noise, are blown up to unit variance
    and drown the other 48 inputs: the first run (seed 1, 140 iterations) stood still at a 0.60 m/s tracking
    error while its curriculum fell to level 0."""
    gpu = torch.cuda.is_available() if gpu is None else gpu
    base = flat_config(env or ROUGH_ENV, gpu)
    return dataclasses.replace(
        base,
        policy=dataclasses.replace(base.policy, actor_hidden_dims=(256, 128, 64), critic_hidden_dims=(256, 128, 64),
                                   normalize_obs=False),
        runner=dataclasses.replace(base.runner, max_iterations=3000 if gpu else 1500))


BLIND_ENV = LocomotionEnvConfig(policy_exclude=("base_lin_vel",))
"""The flat task without the base linear velocity in the policy's observation (no such sensor on a real robot);
the critic keeps it (every term, noise-free)."""


def blind_config(env: Optional[LocomotionEnvConfig] = None, gpu: Optional[bool] = None) -> TrainConfig:
    """The flat settings on ``env`` (default ``BLIND_ENV``) with an LSTM in front of the actor and critic MLPs
    (the policy infers its velocity from the history of what it senses), and 500 iterations on the CPU (about 2 s
    each on 2 cores: the 20-minute budget of the learner issue)."""
    gpu = torch.cuda.is_available() if gpu is None else gpu
    base = flat_config(env or BLIND_ENV, gpu)
    return dataclasses.replace(
        base, policy=dataclasses.replace(base.policy, memory="lstm", memory_size=BLIND_MEMORY, memory_layers=1),
        runner=dataclasses.replace(base.runner, max_iterations=1500 if gpu else 500))


BLIND_MEMORY = 128
"""LSTM width of the blind task's policy."""


HARDWARE = RandomizationConfig(motor_strength=(0.8, 1.2), action_delay=(0, 2))
"""Domain randomization for a policy meant for a robot: the flat task's (friction, added mass, gain factor,
pushes) plus each env's own motor strength (x0.8-1.2: stiffness, damping and torque limit together) and an action
latency of 0-2 control steps (0-40 ms at 50 Hz), the rehearsal's changes a robot brings (docs/deploy.md)."""
PROPRIO_ENV = LocomotionEnvConfig(policy_exclude=("base_lin_vel",), obs_history=5, randomization=HARDWARE)
"""The flat task for a robot that supplies only its joint state and IMU (a Unitree low state): no base velocity in
the policy's observation, which reads its last 5 observations instead (the critic keeps the velocity, noise-free),
and the ``HARDWARE`` randomization."""


DEPLOY_GAINS = RandomizationConfig(kp_scale=(0.9, 1.1), kd_scale=(0.8, 1.2))
"""What a deployable task adds to ``HARDWARE``: the stiffness and damping the robot's motor drivers run, each off by
its own factor (x0.9-1.1 and x0.8-1.2, on top of the flat task's common ``gain_scale`` x0.9-1.1); its other
fields are unused."""


DEPLOY_RAMP_STEPS = 3600
"""A deployable task's hardware randomization widens to its full ranges over the first 3600 control steps (150
iterations of 24 steps): on the Unitree-style test model with the file's contact model, the flat targets at
iteration 250 (13.3 minutes on the 2-core CPU) where the full ranges from the start had not met them at 282 (15
minutes; docs/deploy.md)."""


def deploy_env(env: Optional[LocomotionEnvConfig] = None) -> LocomotionEnvConfig:
    """``env`` (default: the flat task's) for a robot: ``PROPRIO_ENV``'s observation (joint state, IMU, command,
    last action, 5 frames, no base velocity) and ``HARDWARE``'s motor strength and latency plus ``DEPLOY_GAINS``,
    widening over ``DEPLOY_RAMP_STEPS``, on top of ``env``'s own randomization (friction, added mass, gain factor,
    pushes: a biped keeps its smaller push)."""
    env = env or LocomotionEnvConfig()
    rnd = dataclasses.replace(env.randomization, motor_strength=HARDWARE.motor_strength,
                              action_delay=HARDWARE.action_delay, kp_scale=DEPLOY_GAINS.kp_scale,
                              kd_scale=DEPLOY_GAINS.kd_scale, hardware_ramp_steps=DEPLOY_RAMP_STEPS)
    return dataclasses.replace(env, policy_exclude=PROPRIO_ENV.policy_exclude, obs_history=PROPRIO_ENV.obs_history,
                               randomization=rnd)


def beside(clip: str, folder: Path) -> str:
    """A relative clip file's path from ``folder``; keyframe presets and absolute paths as they are."""
    if clip.startswith("keyframes:") or Path(clip).is_absolute():
        return clip
    return str(folder / clip)


def amp_clips_beside(env: Optional[LocomotionEnvConfig]) -> Optional[LocomotionEnvConfig]:
    """``env`` with its relative ``amp_clips`` resolved against the folder of the file that declares the task (the
    first caller outside this package: a robot file's clips sit beside it); ``env.amp_clips=[...]`` on the command
    line stays relative to the current directory."""
    if env is None or not env.amp_clips:
        return env
    here, frame = Path(__file__).resolve().parent, sys._getframe(1)
    while frame is not None:
        caller = frame.f_globals.get("__file__")
        if caller and Path(caller).resolve().parent != here:
            folder = Path(caller).resolve().parent
            return dataclasses.replace(env, amp_clips=tuple(beside(c, folder) for c in env.amp_clips))
        frame = frame.f_back  # type: ignore[assignment]
    return env


def proprio_task(name: str, robot: RobotSpec, env: Optional[LocomotionEnvConfig] = None, description: str = "",
                 defaults: Optional[TaskDefaults] = None) -> TaskSpec:
    """The flat task for ``robot`` on ``env`` (default ``PROPRIO_ENV``): the flat learner settings (an MLP,
    ``flat_config``), so the same budget as the flat task."""
    env = amp_clips_beside(env)
    return flat_task(name, robot, env or PROPRIO_ENV, description or f"{robot.name} on flat ground from its joint "
                     "state and IMU alone", defaults)


def blind_task(name: str, robot: RobotSpec, env: Optional[LocomotionEnvConfig] = None, description: str = "",
               defaults: Optional[TaskDefaults] = None) -> TaskSpec:
    """The blind flat task for ``robot`` (its defaults: ``blind_config(env)``, then ``defaults``)."""
    env, defaults = amp_clips_beside(env), robot_defaults(robot, defaults)
    flat = flat_task(name, robot, env or BLIND_ENV, description or f"{robot.name} on flat ground without base velocity")
    return dataclasses.replace(flat, default_config=lambda: apply_defaults(blind_config(env), defaults),
                               machine_defaults=lambda gpu: apply_defaults(blind_config(env, gpu), defaults))


def rough_task(name: str, robot: RobotSpec, env: Optional[LocomotionEnvConfig] = None, description: str = "",
               defaults: Optional[TaskDefaults] = None) -> TaskSpec:
    """The rough-terrain velocity-tracking task for ``robot`` (its defaults: ``rough_config(env)``, then the
    robot's ``defaults``: ``configs/task_defaults.py``)."""
    env, defaults = amp_clips_beside(env), robot_defaults(robot, defaults)
    flat = flat_task(name, robot, env or ROUGH_ENV, description or f"{robot.name} on generated rough terrain")
    return dataclasses.replace(flat, default_config=lambda: apply_defaults(rough_config(env), defaults),
                               machine_defaults=lambda gpu: apply_defaults(rough_config(env, gpu), defaults))


def flat_task(name: str, robot: RobotSpec, env: Optional[LocomotionEnvConfig] = None, description: str = "",
              defaults: Optional[TaskDefaults] = None) -> TaskSpec:
    """The flat velocity-tracking task for ``robot`` (its defaults: ``flat_config(env)``, then the robot's
    ``defaults``: init noise, network sizes, symmetry, ..., ``configs/task_defaults.py``; the command line
    overrides both).

    The robot is resolved against its MJCF before anything is written (``TaskSpec.validate``): a bad name, regex
    or file stops with one line (exit status 2).
    """
    env, defaults = amp_clips_beside(env), robot_defaults(robot, defaults)

    def make_env(cfg: EnvConfig, device: torch.device) -> LocomotionEnv:
        assert isinstance(cfg, LocomotionEnvConfig)
        return LocomotionEnv(cfg, robot, device)

    def validate(cfg: EnvConfig) -> None:
        from envs.scenes.assemble import build

        assert isinstance(cfg, LocomotionEnvConfig)
        resolved = build(robot, cfg.scene_options())
        if robot.mirror is not None:
            check_declared(robot.name, robot.mirror, resolved.joint_names)

    return TaskSpec(name, make_env, lambda: apply_defaults(flat_config(env), defaults),
                    description or f"{robot.name} tracking velocity commands on flat ground", validate=validate,
                    machine_defaults=lambda gpu: apply_defaults(flat_config(env, gpu), defaults))
