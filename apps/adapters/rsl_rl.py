"""Our VecEnv as an ``rsl_rl.env.VecEnv`` (rsl-rl-lib 5.x), so that rsl_rl's own OnPolicyRunner can train it.

    from apps.adapters.rsl_rl import RslRlVecEnv, rsl_rl_train_cfg
    env = RslRlVecEnv(LocomotionEnv(cfg.env, QUADRUPED))
    runner = rsl_rl.runners.OnPolicyRunner(env, rsl_rl_train_cfg(cfg), log_dir=None, device="cpu")

rsl_rl sees ``dones = terminated | truncated`` and ``extras["time_outs"] = truncated`` (it then bootstraps a
time-out from the value of the observation after the reset, its documented shortcut). ``extras["log"]``
carries our per-step scalars under ``/env/<name>``.
"""

from __future__ import annotations

from typing import Any

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from envs.tasks.base import MujocoTask
from rl_core.config import TrainConfig


class RslRlVecEnv(VecEnv):
    """Wraps one of our MuJoCo tasks (its episode clock is task state: ``env.state.episode_length``) for rsl_rl."""

    def __init__(self, env: MujocoTask[Any], seed: int = 0):
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.action_spec.n
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = env.cfg
        self._obs = self._wrap(env.reset(seed=seed))

    def _wrap(self, obs: dict[str, torch.Tensor]) -> TensorDict:
        return TensorDict(dict(obs), batch_size=[self.num_envs], device=self.device)

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """The task's episode clocks (rsl_rl randomizes them at the start with ``init_at_random_ep_len``)."""
        return self.env.state.episode_length

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.state.episode_length.copy_(value)

    def get_observations(self) -> TensorDict:
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        self._obs = self._wrap(obs)
        extras = {"time_outs": truncated, "log": {f"/env/{k}": v for k, v in info.get("log", {}).items()}}
        return self._obs, rewards, terminated | truncated, extras


def rsl_rl_train_cfg(cfg: TrainConfig) -> dict[str, Any]:
    """rsl_rl 5.x's train_cfg with the same networks, PPO hyperparameters and rollout length as ``cfg``."""
    p, a = cfg.policy, cfg.algorithm
    if a.normalize_rewards or a.target_kl is not None:
        raise ValueError("rsl_rl has no equivalent of algorithm.normalize_rewards / algorithm.target_kl")
    model = {"class_name": "MLPModel", "activation": p.activation, "obs_normalization": p.normalize_obs}
    return {
        "num_steps_per_env": cfg.runner.num_steps_per_env,
        "save_interval": cfg.runner.save_interval,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {**model, "hidden_dims": list(p.actor_hidden_dims),
                  "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": p.init_noise_std}},
        "critic": {**model, "hidden_dims": list(p.critic_hidden_dims)},
        "algorithm": {
            "class_name": "PPO", "num_learning_epochs": a.num_learning_epochs, "num_mini_batches": a.num_mini_batches,
            "clip_param": a.clip_param, "gamma": a.gamma, "lam": a.lam, "value_loss_coef": a.value_loss_coef,
            "use_clipped_value_loss": a.use_clipped_value_loss, "entropy_coef": a.entropy_coef,
            "learning_rate": a.learning_rate, "schedule": "adaptive" if a.schedule == "adaptive" else "fixed",
            "desired_kl": a.desired_kl, "max_grad_norm": a.max_grad_norm,
            "normalize_advantage_per_mini_batch": a.normalize_advantage_per_minibatch,
        },
        "multi_gpu": None,
        "check_for_nan": False,
    }
