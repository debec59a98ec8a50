"""Our MuJoCo tasks under rsl_rl's own OnPolicyRunner (rsl-rl-lib 5.5.1, ``apps/adapters/rsl_rl.py``): a few
iterations of quadruped-flat train, the episode clocks are the task's, and time-outs reach rsl_rl as such."""

from __future__ import annotations

import dataclasses

import pytest
import torch

rsl_rl = pytest.importorskip("rsl_rl", reason="rsl-rl-lib is installed by the dev extra")

from apps.adapters.rsl_rl import RslRlVecEnv, rsl_rl_train_cfg  # noqa: E402
from configs.catalog import get_task  # noqa: E402


def _env(num_envs: int = 32):
    spec = get_task("quadruped-flat")
    cfg = spec.default_config()
    env_cfg = dataclasses.replace(cfg.env, num_envs=num_envs, backend="native")
    return cfg, RslRlVecEnv(spec.make_env(env_cfg, torch.device("cpu")))


def test_rsl_rl_runner_trains_quadruped_flat_for_a_few_iterations():
    from rsl_rl.runners import OnPolicyRunner

    cfg, env = _env()
    train_cfg = rsl_rl_train_cfg(dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, num_steps_per_env=8)))
    runner = OnPolicyRunner(env, train_cfg, log_dir=None, device="cpu")
    before = [p.detach().clone() for p in runner.alg.actor.parameters()]
    runner.learn(num_learning_iterations=3, init_at_random_ep_len=True)
    after = list(runner.alg.actor.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True)), "rsl_rl's PPO learned nothing"
    assert all(torch.isfinite(p).all() for p in after)


def test_episode_clocks_and_time_outs_are_the_tasks():
    _, env = _env(8)
    clocks = env.episode_length_buf
    assert clocks is env.env.state.episode_length
    env.episode_length_buf = torch.full_like(clocks, env.max_episode_length - 1)
    obs, rewards, dones, extras = env.step(torch.zeros(env.num_envs, env.num_actions))
    assert dones.all() and extras["time_outs"].all()  # every env hit its time limit this step
    assert set(obs.keys()) >= {"policy"} and rewards.shape == (env.num_envs,)
    assert all(k.startswith("/env/") for k in extras["log"])
