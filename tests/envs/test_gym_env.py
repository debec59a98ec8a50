"""Gymnasium adapter: shapes, dtypes, SAME_STEP autoreset, final_obs for truncation, terminated vs truncated."""

import numpy as np
import torch

from envs.gym import GymEnvConfig, GymVecEnv
from rl_core.env_api import Checkpointable, Exportable, PixelObservations, VecEnv


def test_the_gymnasium_env_meets_the_contract_the_learner_reads():
    """The runner, evaluator and exporter read the env through ``rl_core.env_api``'s protocols, which nothing checks
    at run time: the adapter is a VecEnv and Exportable; it has no state to checkpoint and flat observations."""
    env = GymVecEnv(GymEnvConfig(env_id="CartPole-v1", num_envs=2))
    try:
        assert isinstance(env, VecEnv) and isinstance(env, Exportable)
        assert not isinstance(env, Checkpointable) and not isinstance(env, PixelObservations)
    finally:
        env.close()


def test_truncation_reports_final_obs_and_resets_in_same_step():
    env = GymVecEnv(GymEnvConfig(env_id="Pendulum-v1", num_envs=3, max_episode_steps=5))
    obs = env.reset(seed=0)
    assert obs["policy"].shape == (3, 3) and obs["policy"].dtype == torch.float32
    assert env.action_spec.discrete is False and env.action_spec.low == (-2.0,)
    for t in range(5):
        obs, rew, term, trunc, info = env.step(torch.zeros(3, 1))
        assert rew.dtype == torch.float32 and term.dtype == torch.bool and trunc.dtype == torch.bool
        assert not term.any()
        if t < 4:
            assert not trunc.any() and info["final_obs"] is None
    assert trunc.all()
    final = info["final_obs"]["policy"]
    # The final observation continues the old episode (Pendulum: obs = cos, sin, angular velocity) ...
    assert not torch.allclose(final, obs["policy"])
    np.testing.assert_allclose(final[:, 0] ** 2 + final[:, 1] ** 2, 1.0, rtol=1e-5)
    # ... and the returned observation is a fresh episode: stepping again must not be truncated.
    obs, _, _, trunc, _ = env.step(torch.zeros(3, 1))
    assert not trunc.any()
    env.close()


def test_termination_is_not_truncation_and_obs_is_fresh():
    env = GymVecEnv(GymEnvConfig(env_id="CartPole-v1", num_envs=2))
    env.reset(seed=1)
    assert env.action_spec.discrete and env.action_spec.n == 2
    seen = 0
    for _ in range(100):
        obs, rew, term, trunc, info = env.step(torch.zeros(2, dtype=torch.long))  # always push left: falls
        assert not trunc.any() and info["final_obs"] is None
        if term.any():
            # Fresh CartPole states are within +-0.05 in every coordinate.
            assert obs["policy"][term].abs().max() <= 0.05
            seen += int(term.sum())
    assert seen >= 4


def test_continuous_actions_are_clipped_to_bounds():
    env = GymVecEnv(GymEnvConfig(env_id="Pendulum-v1", num_envs=1))
    env.reset(seed=0)
    _, r_big, *_ = env.step(torch.tensor([[100.0]]))
    env.reset(seed=0)
    _, r_max, *_ = env.step(torch.tensor([[2.0]]))
    assert torch.equal(r_big, r_max)


def test_same_seed_same_rollout():
    outs = []
    for _ in range(2):
        env = GymVecEnv(GymEnvConfig(env_id="CartPole-v1", num_envs=3))
        o = [env.reset(seed=7)["policy"]]
        for t in range(30):
            o.append(env.step(torch.tensor([t % 2, 1, 0]))[0]["policy"])
        outs.append(torch.stack(o))
    assert torch.equal(outs[0], outs[1])
