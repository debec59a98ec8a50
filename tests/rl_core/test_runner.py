"""The runner against a small torch VecEnv with checkpointable state: truncation bootstrapping, log terms,
and exact resume (k iterations + k resumed == 2k straight) as batched simulators will need it."""

import dataclasses

import pytest
import torch

from rl_core import checkpoint as ckpt
from rl_core.config import AlgorithmConfig, EnvConfig, PolicyConfig, RunnerConfig, TrainConfig
from rl_core.env_api import ActionSpec, VecEnv
from rl_core.runner import OnPolicyRunner


class PointEnv:
    """1-D point driven towards 0; terminates when |x| > 3, truncates after `limit` steps. State on a torch RNG."""

    def __init__(self, num_envs: int, limit: int = 7):
        self.num_envs, self.limit = num_envs, limit
        self.obs_dims = {"policy": 2, "critic": 3}
        self.action_spec = ActionSpec(discrete=False, n=1, low=(-1.0,), high=(1.0,))
        self.device = torch.device("cpu")
        self.gen = torch.Generator().manual_seed(0)
        self.x = torch.zeros(num_envs)
        self.t = torch.zeros(num_envs)

    def _obs(self):
        return {"policy": torch.stack([self.x, self.t / self.limit], -1),
                "critic": torch.stack([self.x, self.t / self.limit, self.x.abs()], -1)}

    def _fresh(self, mask):
        self.x = torch.where(mask, torch.rand(self.num_envs, generator=self.gen) * 2 - 1, self.x)
        self.t = torch.where(mask, torch.zeros_like(self.t), self.t)

    def reset(self, seed=None):
        if seed is not None:
            self.gen.manual_seed(seed)
        self._fresh(torch.ones(self.num_envs, dtype=torch.bool))
        return self._obs()

    def step(self, actions):
        self.x = self.x + actions.clamp(-1, 1).squeeze(-1) * 0.5 + 0.1 * torch.randn(self.num_envs, generator=self.gen)
        self.t = self.t + 1
        reward = -self.x.abs()
        terminated = self.x.abs() > 3
        truncated = (self.t >= self.limit) & ~terminated
        final = {k: v.clone() for k, v in self._obs().items()}
        self._fresh(terminated | truncated)
        info = {"final_obs": final, "log": {"distance": self.x.abs().mean()}}
        return self._obs(), reward, terminated, truncated, info

    def state_dict(self):
        return {"x": self.x.clone(), "t": self.t.clone(), "gen": self.gen.get_state()}

    def load_state_dict(self, s):
        self.x, self.t = s["x"].clone(), s["t"].clone()
        self.gen.set_state(s["gen"])

    def close(self):
        pass


def config(iterations=4):
    return TrainConfig(env=EnvConfig(num_envs=8),
                       policy=PolicyConfig(actor_hidden_dims=(16,), critic_hidden_dims=(16,)),
                       algorithm=AlgorithmConfig(num_mini_batches=2, num_learning_epochs=2, normalize_rewards=True),
                       runner=RunnerConfig(num_steps_per_env=10, max_iterations=iterations, seed=3))


def test_point_env_satisfies_protocol():
    assert isinstance(PointEnv(2), VecEnv)


def test_truncated_steps_store_value_of_final_critic_obs():
    env = PointEnv(8)
    runner = OnPolicyRunner(env, config(), task="point", quiet=True)
    runner.obs = env.reset(seed=0)
    runner.collect()
    s = runner.storage
    assert s.truncated.any() and s.critic_obs is not None
    # Recompute V(final obs) for truncated steps by replaying: values at a truncated step differ from the
    # value of the next stored (reset) observation.
    t, n = [int(i) for i in s.truncated.nonzero()[0]]
    assert s.final_values[t, n] != 0
    if t + 1 < s.T:
        assert s.final_values[t, n] != s.values[t + 1, n]


def test_env_log_terms_reach_scalars(tmp_path):
    runner = OnPolicyRunner(PointEnv(8), config(iterations=2), task="point", run_dir=tmp_path, quiet=True)
    runner.learn()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    for tag in ("Env/distance", "Episode/mean_return", "Policy/explained_variance", "Policy/clip_fraction",
                "Policy/mean_std", "Loss/learning_rate", "Perf/collection_time_s", "Perf/learning_time_s"):
        assert tag in tags, tag


def test_k_plus_k_resumed_equals_2k_straight(tmp_path):
    straight = OnPolicyRunner(PointEnv(8), config(iterations=4), task="point", quiet=True)
    straight.learn()

    first = OnPolicyRunner(PointEnv(8), config(iterations=4), task="point", quiet=True)
    first.learn(num_iterations=2)
    path = first.save(tmp_path / "model_2.pt")
    resumed = OnPolicyRunner(PointEnv(8), config(iterations=4), task="point", quiet=True)
    resumed.load_state_dict(ckpt.load(path))
    resumed.learn()

    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert straight.env_steps == resumed.env_steps == 4 * 80
    assert list(straight.episodes.recent_returns) == list(resumed.episodes.recent_returns)
    assert dataclasses.asdict(straight.cfg) == dataclasses.asdict(resumed.cfg)


class StatEnv(PointEnv):
    """PointEnv that reports its own per-episode value (``episode_stats``): 100 + the step count of each episode
    that ended, NaN elsewhere, as Atari reports whole-game scores."""

    def step(self, actions):
        t_before = self.t + 1
        obs, reward, terminated, truncated, info = super().step(actions)
        done = terminated | truncated
        info["episode_stats"] = {"score": torch.where(done, 100.0 + t_before, torch.full_like(t_before, float("nan")))}
        self.ended = getattr(self, "ended", []) + (100.0 + t_before[done]).tolist()
        return obs, reward, terminated, truncated, info


def test_env_episode_stats_are_logged_as_means_of_ended_episodes(tmp_path):
    env = StatEnv(8)
    runner = OnPolicyRunner(env, config(iterations=3), task="point", run_dir=tmp_path, quiet=True)
    summary = runner.learn()
    window = env.ended[-runner.cfg.runner.log_window:]
    assert summary["mean_score"] == sum(window) / len(window)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [e.value for e in acc.Scalars("Episode/score")][-1] == pytest.approx(summary["mean_score"], rel=1e-6)
    # A resumed runner continues the same window.
    data = runner.state_dict()
    resumed = OnPolicyRunner(StatEnv(8), config(iterations=3), task="point", quiet=True)
    resumed.load_state_dict(data)
    assert resumed.summary()["mean_score"] == summary["mean_score"]


class ThreadedPointEnv(PointEnv):
    """PointEnv declaring native threads (``NativeThreads``); records torch's thread count at each step."""

    rollout_torch_threads = 1

    def __init__(self, num_envs: int):
        super().__init__(num_envs)
        self.seen: list[int] = []

    def step(self, actions):
        self.seen.append(torch.get_num_threads())
        return super().step(actions)


def test_rollout_runs_on_the_threads_the_env_asks_for_and_the_update_on_the_runners():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        env = ThreadedPointEnv(8)
        runner = OnPolicyRunner(env, config(), task="point", quiet=True)
        runner.obs = env.reset(seed=0)
        runner.collect()
        assert env.seen == [1] * 10
        assert torch.get_num_threads() == 2  # restored for the update
    finally:
        torch.set_num_threads(before)
