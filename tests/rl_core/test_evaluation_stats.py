"""``rl_core.evaluation.evaluate`` keeps each ended episode's ``info["episode_stats"]`` values (NaN skipped)."""

from __future__ import annotations

import math

import pytest
import torch

from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec
from rl_core.evaluation import evaluate
from rl_core.modules.actor_critic import ActorCritic


class CountdownEnv:
    """Env ``i``'s episodes last ``i + 1`` steps (the last env's end by termination). Each ended episode reports
    ``success`` = 1 for even envs, 0 for odd ones, NaN for env 1 (no value), and ``score`` = the env's episode
    count so far (NaN on the steps where the env's episode goes on)."""

    def __init__(self, num_envs: int):
        self.num_envs = num_envs
        self.obs_dims = {"policy": 1}
        self.action_spec = ActionSpec(discrete=False, n=1, low=(-1.0,), high=(1.0,))
        self.device = torch.device("cpu")
        self.t = torch.zeros(num_envs)
        self.episodes = torch.zeros(num_envs)
        self.length = torch.arange(num_envs, dtype=torch.float32) + 1

    def reset(self, seed: int | None = None) -> dict[str, torch.Tensor]:
        self.t.zero_()
        self.episodes.zero_()
        return {"policy": self.t.unsqueeze(1).clone()}

    def step(self, actions: torch.Tensor):
        self.t += 1
        done = self.t >= self.length
        self.episodes += done.float()
        nan = torch.full((self.num_envs,), math.nan)
        success = (torch.arange(self.num_envs) % 2 == 0).float()
        success[1] = math.nan
        info = {"final_obs": None,
                "episode_stats": {"success": torch.where(done, success, nan),
                                  "score": torch.where(done, self.episodes, nan)}}
        terminated = done & (torch.arange(self.num_envs) == self.num_envs - 1)
        truncated = done & ~terminated
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        return {"policy": self.t.unsqueeze(1).clone()}, torch.ones(self.num_envs), terminated, truncated, info

    def close(self) -> None:
        pass


def _policy() -> ActorCritic:
    return ActorCritic(1, None, ActionSpec(discrete=False, n=1, low=(-1.0,), high=(1.0,)),
                       PolicyConfig(actor_hidden_dims=(4,), critic_hidden_dims=(4,))).eval()


def test_episode_stats_are_averaged_over_the_chosen_episodes_that_have_them():
    env = CountdownEnv(4)
    m = evaluate(_policy(), env, episodes=8, seed=0)  # 2 episodes per env
    assert m["episodes"] == 8
    # success: envs 0, 2 (1.0), env 3 (0.0), env 1 NaN (left out): 6 episodes with a value, 4 of them successes
    assert m["success"] == pytest.approx(4 / 6)
    assert m["score"] == pytest.approx(1.5)  # every env's first and second episode
    assert m["fall_rate"] == pytest.approx(2 / 8)
    assert m["mean_episode_length"] == pytest.approx((1 + 2 + 3 + 4) / 4)


def test_only_the_chosen_episodes_count():
    """With 3 episodes over 4 envs (one each, round order: envs 0, 1, 2), env 3's failure is not chosen."""
    m = evaluate(_policy(), CountdownEnv(4), episodes=3, seed=0)
    assert m["episodes"] == 3 and m["success"] == 1.0  # env 0 and env 2 succeed, env 1 has no value


def test_an_env_without_episode_stats_reports_none():
    class Plain(CountdownEnv):
        def step(self, actions):
            obs, rew, term, trunc, info = super().step(actions)
            del info["episode_stats"]
            return obs, rew, term, trunc, info

    m = evaluate(_policy(), Plain(2), episodes=2, seed=0)
    assert set(m) == {"episodes", "diverged_episodes", "mean_episode_return", "mean_episode_length", "fall_rate"}
    assert m["diverged_episodes"] == 0


class DivergingEnv(CountdownEnv):
    """CountdownEnv whose env 3 diverges at the end of each episode (invalid, terminated) and whose env 1 gets a
    NaN reward in its second episode."""

    def step(self, actions):
        obs, rew, term, trunc, info = super().step(actions)
        done = term | trunc
        invalid = torch.zeros(self.num_envs, dtype=torch.bool)
        invalid[3] = bool(done[3])
        info["invalid"] = invalid
        if self.episodes[1] == 1 and not done[1]:
            rew = rew.clone()
            rew[1] = math.nan
        return obs, rew, term, trunc, info


def test_diverged_episodes_are_counted_apart_and_enter_no_metric():
    m = evaluate(_policy(), DivergingEnv(4), episodes=8, seed=0)  # 2 episodes per env
    # env 3's two episodes diverged (each would have been a fall and a failure), env 1's second had a NaN reward
    assert m["diverged_episodes"] == 3 and m["episodes"] == 5
    assert m["fall_rate"] == 0.0  # the only falls were env 3's diverged episodes
    assert m["success"] == 1.0  # envs 0 and 2, two each (env 1: no value); env 3's failures left out
    assert math.isfinite(m["mean_episode_return"])
    assert m["mean_episode_length"] == pytest.approx((1 + 1 + 2 + 3 + 3) / 5)
