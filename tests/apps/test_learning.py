"""End-to-end learning with fixed seeds. A 30k-step CartPole run is the default suite's learning check; the full
runs (CartPole's 100k-step threshold, Pendulum, the recurrent masked Pendulum) are marked slow."""

import dataclasses

import pytest

from configs.gym_tasks import PENDULUM_MASKED_MAX_ENV_STEPS, cartpole, pendulum, pendulum_masked
from envs.gym import GymVecEnv
from rl_core.runner import OnPolicyRunner


def train(cfg, task):
    runner = OnPolicyRunner(GymVecEnv(cfg.env), cfg, task=task, quiet=True)
    return runner.learn()


def test_cartpole_learns_within_30k_steps_with_default_config():
    """The default config on a 30k-step budget (its learning rate decays over those steps): the mean return of the
    last episodes passes 100 (a random policy: about 22; seeds 1-3 reach 131 / 205 / 297), in about a quarter of
    the full run's time."""
    cfg = cartpole()
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=1, max_env_steps=30_000))
    summary = train(cfg, "CartPole-v1")
    assert summary["env_steps"] <= 30_300
    assert summary["mean_episode_return"] >= 100


@pytest.mark.slow
def test_cartpole_learns_with_default_config():
    cfg = cartpole()
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=1))
    summary = train(cfg, "CartPole-v1")
    assert summary["env_steps"] <= 101_000
    assert summary["mean_episode_return"] >= 475


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pendulum_learns_with_default_config(seed):
    cfg = pendulum()
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=seed))
    assert train(cfg, "Pendulum-v1")["mean_episode_return"] >= -250


@pytest.mark.slow
def test_cartpole_median_of_five_seeds():
    """Seeds 1-5 with the default config: the median reaches >= 475 within 100k env steps. Single seeds may not:
    PPO on CartPole sometimes collapses for a while and recovers (an 8-seed sweep in the README: 6 of 8 at 500)."""
    returns = []
    for seed in range(1, 6):
        cfg = cartpole()
        cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=seed))
        returns.append(train(cfg, "CartPole-v1")["mean_episode_return"])
    assert sorted(returns)[2] >= 475, returns


@pytest.mark.slow
def test_recurrent_policy_learns_masked_pendulum():
    """Pendulum without the angular velocity: the GRU defaults reach a mean return >= -300 within 500k env steps
    (seed 1; about 7 minutes on our shared 2-core CPU). The memoryless policy with the same config does not
    (docs/learner.md has the numbers and commands)."""
    cfg = pendulum_masked()
    assert cfg.policy.memory == "gru" and cfg.env.obs_mask == (2,)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=1))
    summary = train(cfg, "Pendulum-v1-masked")
    assert summary["env_steps"] <= PENDULUM_MASKED_MAX_ENV_STEPS <= 500_000
    assert summary["mean_episode_return"] >= -300
