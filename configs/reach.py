"""``arm-reach``: the 4-joint arm of ``envs/tasks/reach/`` moving its fingertip to random targets.

The second task family on the MuJoCo task base (``envs/tasks/base.py``): fixed base, no contacts but the floor,
no commands. PPO settings are ``configs/locomotion.flat_config``'s with a small (64, 64) MLP; on the 2-core CPU
512 envs (native MuJoCo) train to the success threshold in a few minutes (docs/reach.md).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import torch

from configs.locomotion import flat_config
from envs.registry import TaskSpec, register
from envs.tasks.reach import ReachEnv, ReachEnvConfig
from rl_core.config import EnvConfig, PolicyConfig, TrainConfig


def reach_config(env: Optional[ReachEnvConfig] = None, gpu: Optional[bool] = None) -> TrainConfig:
    """The flat locomotion learner settings with a (64, 64) MLP on ``env`` (num_envs: 4096 on a GPU, 512 on a
    CPU) and a budget that reaches the success threshold on the CPU."""
    gpu = torch.cuda.is_available() if gpu is None else gpu
    env = dataclasses.replace(env or ReachEnvConfig(), num_envs=4096 if gpu else 512)
    base = flat_config(gpu=gpu)
    return dataclasses.replace(
        base, env=env,
        policy=PolicyConfig(actor_hidden_dims=(64, 64), critic_hidden_dims=(64, 64), activation="elu",
                            init_noise_std=1.0, min_std=0.02, max_std=2.0, orthogonal_init=False),
        # One torch thread on the CPU: with (64, 64) networks the update is mostly per-op overhead, and a second
        # thread only contends with the physics pool (docs/reach.md: 0.4 s vs 2.5-16 s per update at load 11).
        runner=dataclasses.replace(base.runner, max_iterations=300 if gpu else 200, save_interval=50,
                                   torch_threads=0 if gpu else 1))


def reach_task(name: str = "arm-reach", env: Optional[ReachEnvConfig] = None, description: str = "") -> TaskSpec:
    """The reaching task (defaults: ``reach_config(env)``)."""

    def make_env(cfg: EnvConfig, device: torch.device) -> ReachEnv:
        assert isinstance(cfg, ReachEnvConfig)
        return ReachEnv(cfg, device)

    return TaskSpec(name, make_env, lambda: reach_config(env),
                    description or "4-joint fixed-base arm reaching random targets (native MuJoCo on CPU)",
                    machine_defaults=lambda gpu: reach_config(env, gpu))


register(reach_task())
