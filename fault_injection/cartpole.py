"""A tiny CartPole config and runner: the fast subject of the fault harness and of many tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from configs.gym_tasks import cartpole
from envs.gym import GymEnvConfig, GymVecEnv
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


def make_runner(cfg: TrainConfig, run_dir: Path | str | None = None) -> OnPolicyRunner:
    assert isinstance(cfg.env, GymEnvConfig)
    return OnPolicyRunner(GymVecEnv(cfg.env), cfg, task="CartPole-v1", run_dir=run_dir, quiet=True)
