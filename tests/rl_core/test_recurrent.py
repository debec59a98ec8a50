"""Recurrent policies (policy.memory = lstm | gru): config checks, the rollout's state bookkeeping, trajectory
minibatches that replay the rollout exactly, determinism and exact resume."""

import dataclasses

import pytest
import torch

from contract.errors import ConfigError
from rl_core import checkpoint as ckpt
from rl_core.config import AlgorithmConfig, EnvConfig, PolicyConfig, RunnerConfig, TrainConfig
from rl_core.modules.recurrent_steps import rollout_step, sequence_params_and_value, value_with_state
from rl_core.runner import OnPolicyRunner
from rl_core.storage import RolloutStorage
from tests.helpers import transition
from tests.rl_core.test_runner import PointEnv


class RecordingPointEnv(PointEnv):
    """PointEnv that keeps every step's ``final_obs`` (to recompute the bootstrap values)."""

    def step(self, actions):
        out = super().step(actions)
        self.finals = getattr(self, "finals", []) + [out[4]["final_obs"]]
        return out


def config(memory="lstm", iterations=4, num_envs=8, T=10, seed=3):
    return TrainConfig(env=EnvConfig(num_envs=num_envs),
                       policy=PolicyConfig(actor_hidden_dims=(16,), critic_hidden_dims=(16,), memory=memory,
                                           memory_size=8, memory_layers=2),
                       algorithm=AlgorithmConfig(num_mini_batches=2, num_learning_epochs=2),
                       runner=RunnerConfig(num_steps_per_env=T, max_iterations=iterations, seed=seed))


def test_bad_memory_values_are_one_line_config_errors():
    with pytest.raises(ConfigError, match=r"policy\.memory='rnn'.*'none', 'lstm', 'gru'") as e:
        PolicyConfig(memory="rnn")
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match=r"policy\.memory_size"):
        PolicyConfig(memory="gru", memory_size=0)
    with pytest.raises(ConfigError, match=r"policy\.memory_layers"):
        PolicyConfig(memory="gru", memory_layers=0)
    with pytest.raises(ConfigError, match=r"algorithm\.num_mini_batches.*divisor of env\.num_envs = 6"):
        dataclasses.replace(config(num_envs=6, T=4), algorithm=AlgorithmConfig(num_mini_batches=4))
    assert not PolicyConfig().recurrent and PolicyConfig(memory="lstm").recurrent


def test_trajectory_layout_splits_at_episode_ends_and_pads():
    T, N = 5, 2
    s = RolloutStorage(T, N, torch.device("cpu"))
    z, no = torch.zeros(N, 1), torch.zeros(N, dtype=torch.bool)
    for _ in range(T):
        s.add(transition(z, None, z, z[:, 0], z, z[:, 0], z[:, 0], no, no, hidden=torch.zeros(2, 1, N, 3)))
    s.terminated[1, 0] = True  # env 0: steps 0-1, then 2-4
    s.truncated[3, 1] = True  # env 1: steps 0-3, then 4
    s.weights[4, 1] = 0.0  # an invalid last step still belongs to its segment
    lay = s.trajectory_layout()
    assert lay["env"].tolist() == [0, 0, 1, 1]
    assert lay["start"].tolist() == [0 * N + 0, 2 * N + 0, 0 * N + 1, 4 * N + 1]
    assert lay["mask"].sum(0).tolist() == [2, 3, 4, 1]
    assert lay["index"][:, 1].tolist() == [2 * N, 3 * N, 4 * N, 0, 0]  # padding points at sample 0, masked
    assert lay["mask"][:, 1].tolist() == [True, True, True, False, False]


@pytest.mark.parametrize("memory", ["lstm", "gru"])
def test_minibatches_replay_the_rollout_exactly(memory):
    """Every real step appears once per epoch, padded steps weigh 0, and the policy run over each segment from its
    stored initial state gives back the distribution and value of the rollout (state alignment, resets)."""
    env = RecordingPointEnv(8)
    runner = OnPolicyRunner(env, config(memory), task="point", quiet=True)
    runner.obs = env.reset(seed=0)
    runner.learn(num_iterations=1)  # trained once, so the memory and normalizer are not at their init
    runner.collect()
    s, policy = runner.storage, runner.policy
    assert s.truncated.any()
    done = s.terminated | s.truncated
    # The state stored before the step after an episode end is zero; elsewhere it is not.
    assert s.hidden is not None
    after_end = s.hidden[1:][done[:-1]]
    assert after_end.abs().max() == 0 and s.hidden[1:][~done[:-1]].abs().min(dim=-1).values.max() > 0
    lay = s.trajectory_layout()
    assert sorted(lay["index"][lay["mask"]].tolist()) == list(range(s.T * s.N))  # each real step once
    real_steps = 0
    with torch.no_grad():
        for batch in s.recurrent_minibatches(2, 1, torch.Generator().manual_seed(0)):
            params, values = sequence_params_and_value(policy, batch["obs"], batch["critic_obs"], batch["hidden"])
            real = batch["weights"] > 0
            torch.testing.assert_close(params[real], batch["dist_params"][real], atol=1e-5, rtol=0)
            torch.testing.assert_close(values[real], batch["values"][real], atol=1e-5, rtol=0)
            real_steps += int(real.sum())
    assert real_steps == s.T * s.N  # one epoch: every step in exactly one minibatch


def test_truncated_bootstrap_reads_the_state_before_the_reset():
    env = RecordingPointEnv(8)
    cfg = config("gru")  # no running normalizer: its statistics move during the rollout
    cfg = dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, normalize_obs=False))
    runner = OnPolicyRunner(env, cfg, task="point", quiet=True)
    runner.obs = env.reset(seed=0)
    runner.collect()
    s, policy = runner.storage, runner.policy
    t, n = [int(i) for i in s.truncated.nonzero()[0]]
    with torch.no_grad():
        hidden = s.hidden[t].permute(1, 2, 0, 3)  # [K, L, N, H], the state before step t
        _, _, after = rollout_step(policy, s.obs[t], s.critic_obs[t], hidden)
        final = env.finals[t]["critic"]
        expected = value_with_state(policy, final, after)[n]
        zero_state = value_with_state(policy, final, torch.zeros_like(after))[n]
    torch.testing.assert_close(s.final_values[t, n], expected, atol=1e-6, rtol=0)
    assert not torch.isclose(expected, zero_state, atol=1e-6)


@pytest.mark.parametrize("memory", ["lstm", "gru"])
def test_rollout_has_no_host_sync(memory):
    """The recurrent rollout (state carried, stored, reset per env) copies nothing to the host. (The recurrent
    update does: the number of trajectory segments and each minibatch's selection have data-dependent shapes.)"""
    from tests.rl_core.test_host_syncs import CountSyncs

    env = PointEnv(8)
    runner = OnPolicyRunner(env, config(memory), task="point", quiet=True)
    runner.obs = env.reset(seed=0)
    runner.collect()  # warm-up
    with CountSyncs() as counter:
        runner.collect()
    assert counter.calls == []
    assert runner.storage.step == runner.storage.T and runner.storage.truncated.any()


def params_of(runner):
    return [v.clone() for v in runner.policy.state_dict().values()]


@pytest.mark.parametrize("memory", ["lstm", "gru"])
def test_same_seed_bit_identical_other_seed_differs(memory):
    runs = []
    for seed in (3, 3, 4):
        r = OnPolicyRunner(PointEnv(8), config(memory, iterations=3, seed=seed), task="point", quiet=True)
        r.learn()
        runs.append(params_of(r))
    assert all(torch.equal(a, b) for a, b in zip(runs[0], runs[1], strict=True))
    assert any(not torch.equal(a, b) for a, b in zip(runs[0], runs[2], strict=True))


@pytest.mark.parametrize("memory", ["lstm", "gru"])
def test_k_plus_k_resumed_equals_2k_straight(tmp_path, memory):
    straight = OnPolicyRunner(PointEnv(8), config(memory), task="point", quiet=True)
    straight.learn()
    first = OnPolicyRunner(PointEnv(8), config(memory), task="point", quiet=True)
    first.learn(num_iterations=2)
    path = first.save(tmp_path / "model_2.pt")
    data = ckpt.load(path)
    assert data["hidden"] is not None and data["hidden"].abs().max() > 0
    resumed = OnPolicyRunner(PointEnv(8), config(memory), task="point", quiet=True)
    resumed.load_state_dict(data)
    assert torch.equal(resumed.alg.hidden, first.alg.hidden)
    resumed.learn()
    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert torch.equal(straight.alg.hidden, resumed.alg.hidden)


def test_resume_without_saved_hidden_state_would_differ(tmp_path):
    """The saved state matters: resuming from zeros instead gives a different run (the test above can fail)."""
    straight = OnPolicyRunner(PointEnv(8), config("lstm"), task="point", quiet=True)
    straight.learn()
    first = OnPolicyRunner(PointEnv(8), config("lstm"), task="point", quiet=True)
    first.learn(num_iterations=2)
    data = first.state_dict()
    data["hidden"] = torch.zeros_like(data["hidden"])
    resumed = OnPolicyRunner(PointEnv(8), config("lstm"), task="point", quiet=True)
    resumed.load_state_dict(data)
    resumed.learn()
    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert any(not torch.equal(a[k], b[k]) for k in a)


def test_memoryless_policies_step_without_a_state():
    """``recurrent_steps`` on a policy without memory: no state, and the memoryless methods' numbers."""
    from rl_core.env_api import ActionSpec
    from rl_core.modules.actor_critic import ActorCritic
    from rl_core.modules.recurrent_steps import actor_step, hidden_shape, init_hidden

    small = PolicyConfig(actor_hidden_dims=(8,), critic_hidden_dims=(8,))
    policy = ActorCritic(3, 2, ActionSpec(discrete=False, n=2), small)
    obs, critic_obs = torch.randn(5, 3), torch.randn(5, 2)
    assert hidden_shape(policy, 5) == () and init_hidden(policy, 5) is None
    params, values, nxt = rollout_step(policy, obs, critic_obs, None)
    assert nxt is None and torch.equal(params, policy.dist_params(obs))
    assert torch.equal(values, policy.value(critic_obs))
    assert actor_step(policy, obs, None)[1] is None
    assert torch.equal(value_with_state(policy, critic_obs, None), values)
    recurrent = ActorCritic(3, 2, ActionSpec(discrete=False, n=2), config("lstm").policy)
    assert hidden_shape(recurrent, 5) == (4, 2, 5, 8)  # LSTM: (h, c) of the actor, then of the critic
