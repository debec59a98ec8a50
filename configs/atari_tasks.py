"""Atari games with CleanRL's PPO settings (ppo_atari.py): Nature CNN shared by actor and critic, 8 envs x 128 steps."""

from __future__ import annotations

import torch

from envs import atari_wrappers
from envs.atari import AtariEnvConfig, AtariVecEnv
from envs.registry import TaskSpec, register
from rl_core.config import AlgorithmConfig, EnvConfig, PolicyConfig, RunnerConfig, TrainConfig


def _make_atari_env(cfg: EnvConfig, device: torch.device) -> AtariVecEnv:
    assert isinstance(cfg, AtariEnvConfig)
    return AtariVecEnv(cfg, device)


def atari_config(env_id: str) -> TrainConfig:
    """CleanRL's hyperparameters: lr 2.5e-4 annealed to 0 over 10M steps, clip 0.1, 4 epochs x 4 minibatches.

    value_loss_coef 0.25 = CleanRL's vf_coef 0.5 times the 0.5 in its value loss (ours has no 0.5).
    """
    return TrainConfig(
        env=AtariEnvConfig(env_id=env_id, num_envs=8),
        policy=PolicyConfig(encoder="cnn", share_encoder=True, actor_hidden_dims=(), critic_hidden_dims=(),
                            activation="relu", normalize_obs=False),
        algorithm=AlgorithmConfig(num_learning_epochs=4, num_mini_batches=4, clip_param=0.1, gamma=0.99, lam=0.95,
                                  learning_rate=2.5e-4, schedule="linear", entropy_coef=0.01, value_loss_coef=0.25,
                                  max_grad_norm=0.5, use_clipped_value_loss=True,
                                  normalize_advantage_per_minibatch=True),
        runner=RunnerConfig(num_steps_per_env=128, max_env_steps=10_000_000, save_interval=50),
    )


def atari_task(env_id: str) -> TaskSpec:
    return TaskSpec(env_id, _make_atari_env, lambda: atari_config(env_id),
                    f"Atari {env_id}, Nature CNN (CleanRL settings)", check_dependencies=atari_wrappers.require_ale)


for _id in ("BreakoutNoFrameskip-v4", "PongNoFrameskip-v4"):
    register(atari_task(_id))
