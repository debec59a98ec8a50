"""Small configs and runners shared by tests."""

from __future__ import annotations

import dataclasses

from configs.gym_tasks import cartpole
from envs.gym import GymVecEnv
from rl_core.config import TrainConfig
from rl_core.runner import OnPolicyRunner


def tiny_cartpole(seed: int = 0, iterations: int = 6) -> TrainConfig:
    cfg = cartpole()
    return dataclasses.replace(
        cfg,
        env=dataclasses.replace(cfg.env, num_envs=4),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=16, max_env_steps=None, max_iterations=iterations,
                                   seed=seed, save_interval=1000),
        algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=2),
    )


def make_runner(cfg: TrainConfig, run_dir=None) -> OnPolicyRunner:
    return OnPolicyRunner(GymVecEnv(cfg.env), cfg, task="CartPole-v1", run_dir=run_dir, quiet=True)
