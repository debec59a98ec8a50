"""Teacher-student distillation tasks (``algorithm.name=distillation``, docs/learner.md): a student with the blind
task's observation (no base linear velocity) and LSTM policy learns to act like a teacher trained with PPO on the
full observation, which it reads from the env's noise-free ``critic`` group (the same 48 values, in the same order,
as ``quadruped-flat``'s policy observation).

    python train.py --task quadruped-flat                                          # the teacher (PPO)
    python train.py --task quadruped-flat-blind-distill algorithm.teacher=runs/quadruped-flat/<run>

``algorithm.teacher`` has no default: the task stops with one line until it is given.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from configs.locomotion import amp_clips_beside, blind_config, blind_task
from envs.registry import TaskSpec, register
from envs.robots.quadruped import QUADRUPED
from envs.robots.spec import RobotSpec
from envs.tasks.locomotion.config import LocomotionEnvConfig
from rl_core.config import AlgorithmConfig, TrainConfig

DISTILL_NOISE_STD = 0.1
"""The student's action std while it collects (never trained by distillation): small, so the student visits the
states its own deterministic policy will meet, with a little exploration around them."""


def distill_config(base: TrainConfig, gpu: bool = False) -> TrainConfig:
    """``base``'s env, networks and rollout with the distillation algorithm (rsl_rl's defaults: lr 1e-3, fixed;
    here 2 epochs of 4 minibatches per iteration) and a short run: a student needs far fewer iterations than its
    teacher (the teacher from scratch: 300 on a CPU, 1500 on a GPU)."""
    return dataclasses.replace(
        base,
        policy=dataclasses.replace(base.policy, init_noise_std=DISTILL_NOISE_STD),
        algorithm=AlgorithmConfig(name="distillation", teacher=None, teacher_obs="critic", distillation_loss="mse",
                                  learning_rate=1e-3, schedule="fixed", num_learning_epochs=2, num_mini_batches=4,
                                  max_grad_norm=1.0),
        runner=dataclasses.replace(base.runner, max_iterations=300 if gpu else 95,
                                   save_interval=base.runner.save_interval if gpu else 20))


def distill_task(name: str, robot: RobotSpec, env: Optional[LocomotionEnvConfig] = None,
                 description: str = "") -> TaskSpec:
    """The blind flat task for ``robot`` (``configs.locomotion.blind_task``), learned by distillation from a
    teacher given as ``algorithm.teacher`` (its defaults: ``distill_config(blind_config(env))``)."""
    env = amp_clips_beside(env)
    blind = blind_task(name, robot, env, description or f"{robot.name} without base velocity, distilled from a "
                                                        "teacher (algorithm.teacher=RUN)")
    return dataclasses.replace(blind, default_config=lambda: distill_config(blind_config(env), _gpu()),
                               machine_defaults=lambda gpu: distill_config(blind_config(env, gpu), gpu))


def _gpu() -> bool:
    import torch

    return torch.cuda.is_available()


register(distill_task("quadruped-flat-blind-distill", QUADRUPED,
                      description="quadruped-flat-blind's LSTM student distilled from a quadruped-flat teacher "
                                  "(algorithm.teacher=runs/quadruped-flat/<run>)"))
