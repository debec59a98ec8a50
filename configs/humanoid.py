"""``humanoid-flat``: the built-in humanoid (``envs/robots/humanoid.py``) on the flat velocity-tracking task.

The task is the quadruped's (``configs/locomotion.flat_config``: same observation, noise, domain randomization,
pushes, PPO and network) with the humanoid's own defaults, all here: command ranges with a share of standing
commands, biped reward weights and their targets (``RewardParams``), a base-height termination, and a smaller
push (0.5 m/s, as Isaac Lab's G1 / H1 tasks; 1 m/s knocks a 43 kg biped over before it has learned to stand).
Weights follow unitree_rl_gym's H1 and Isaac Lab's H1 / G1 flat tasks (biped air time in single stance, foot
slip, swing-foot clearance, feet distance, base height, hip roll / yaw deviation, action rate, torques, energy).
For the hardware (issue 40) the randomization is ``configs.locomotion.HARDWARE``: every env also has its own motor
strength (x0.8-1.2: stiffness, damping and torque limit together) and an action latency of 0-2 control steps
(0-40 ms); without them the policy fell in the rehearsal at 40 ms of latency and with motor strength or kp x0.8
(docs/deploy.md).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from configs.locomotion import HARDWARE, flat_config, flat_task
from configs.task_defaults import TaskDefaults, apply_defaults
from envs.registry import register
from envs.robots.humanoid import HUMANOID
from envs.tasks.locomotion.config import CommandConfig, LocomotionEnvConfig, RewardParams, RewardScales
from rl_core.config import TrainConfig

HUMANOID_ENV = LocomotionEnvConfig(
    commands=CommandConfig(lin_vel_x=(-0.5, 1.0), lin_vel_y=(-0.3, 0.3), yaw_rate=(-1.0, 1.0), min_lin_vel=0.1,
                           standing_share=0.1),
    rewards=RewardScales(
        tracking_lin_vel=1.0, tracking_ang_vel=0.75, lin_vel_z=-2.0, ang_vel_xy=-0.05, orientation=-1.0,
        torques=-2e-6, dof_acc=-2.5e-7, action_rate=-0.01, feet_air_time=0.0, feet_slip=-0.25, collision=-1.0,
        feet_air_time_biped=1.0, feet_clearance=-10.0, feet_distance=-2.0, base_height=-10.0, joint_deviation=-1.0,
        energy=-1e-4, alive=0.5),
    reward_params=RewardParams(air_time_threshold=0.4, base_height_target=0.95, feet_clearance_height=0.12,
                               feet_min_distance=0.15, deviation_joints=".*_hip_(roll|yaw)_joint"),
    randomization=dataclasses.replace(HARDWARE, push_vel_xy=0.5),
    min_base_height=0.6,
)
"""The humanoid's env defaults (num_envs is the machine's: see ``flat_config``)."""


HUMANOID_DEFAULTS = TaskDefaults(init_noise_std=0.5, symmetry="augment", max_iterations=1000)
"""The humanoid's learner defaults on top of ``flat_config``: 1000 iterations, an initial action noise std of 0.5
(with the quadruped's 1.0, 0.25 rad of random joint targets, nearly every episode ends in a fall within a second
and the clipped total reward is then zero almost everywhere) and left-right symmetry augmentation (without it the
same run learned a limp: feet in the air 37% / 59% of the time; with it 49% / 48%, and it reached the tracking
thresholds in 475 instead of 731 iterations; docs/humanoid.md)."""


def humanoid_flat(gpu: Optional[bool] = None) -> TrainConfig:
    """``flat_config`` with the humanoid's env and ``HUMANOID_DEFAULTS`` (the task's ``default_config``)."""
    return apply_defaults(flat_config(HUMANOID_ENV, gpu), HUMANOID_DEFAULTS)


TASK = register(flat_task("humanoid-flat", HUMANOID, HUMANOID_ENV,
                          description="humanoid (12 trained leg joints, arms held) tracking velocity commands on "
                                      "flat ground",
                          defaults=HUMANOID_DEFAULTS))
"""The built-in humanoid's task: its robot file's defaults through ``flat_task(..., defaults=...)``."""
