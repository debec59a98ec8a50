"""Config validation (types, ranges, cross-field), overrides, docs, dict round trip."""

import dataclasses

import pytest

from configs.gym_tasks import cartpole, pendulum
from contract.errors import ConfigError
from envs.gym import GymEnvConfig
from rl_core.config import AlgorithmConfig, PolicyConfig, RunnerConfig, TrainConfig
from rl_core.config_io import apply_overrides, describe, field_docs, from_dict, parse_override, to_dict


@pytest.mark.parametrize("make, field", [
    (lambda: AlgorithmConfig(num_mini_batches=0), "algorithm.num_mini_batches"),
    (lambda: AlgorithmConfig(gamma=1.5), "algorithm.gamma"),
    (lambda: AlgorithmConfig(schedule="cosine"), "algorithm.schedule"),
    (lambda: AlgorithmConfig(learning_rate=-1.0), "algorithm.learning_rate"),
    (lambda: RunnerConfig(num_steps_per_env=-3), "runner.num_steps_per_env"),
    (lambda: RunnerConfig(device="tpu"), "runner.device"),
    (lambda: RunnerConfig(max_iterations="ten"), "runner.max_iterations"),
    (lambda: PolicyConfig(activation="swish"), "policy.activation"),
    (lambda: PolicyConfig(actor_hidden_dims=(64, 0)), "policy.actor_hidden_dims"),
    (lambda: PolicyConfig(min_std=1.0, max_std=0.5), "policy.max_std"),
    (lambda: GymEnvConfig(num_envs=0), "env.num_envs"),
    (lambda: TrainConfig(env=GymEnvConfig(num_envs=3), algorithm=AlgorithmConfig(num_mini_batches=5),
                         runner=RunnerConfig(num_steps_per_env=7)), "algorithm.num_mini_batches"),
])
def test_bad_values_name_the_field(make, field):
    with pytest.raises(ConfigError) as e:
        make()
    assert e.value.field == field
    assert "\n" not in str(e.value) and field in str(e.value)


def test_configs_are_frozen_and_typed():
    cfg = AlgorithmConfig(desired_kl=1)  # int is accepted for a float field and stored as float
    assert isinstance(cfg.desired_kl, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.gamma = 0.5  # type: ignore[misc]


def test_overrides_and_unknown_keys():
    cfg = apply_overrides(cartpole(), dict([parse_override("algorithm.learning_rate=3e-4"),
                                            parse_override("policy.actor_hidden_dims=[32,16]"),
                                            parse_override("runner.max_env_steps=null")]))
    assert cfg.algorithm.learning_rate == 3e-4
    assert cfg.policy.actor_hidden_dims == (32, 16)
    assert cfg.runner.max_env_steps is None
    with pytest.raises(ConfigError, match="algorithm.learning_rat"):
        apply_overrides(cartpole(), {"algorithm.learning_rat": 1.0})
    with pytest.raises(ConfigError, match="bogus"):
        apply_overrides(cartpole(), {"bogus.x": 1})
    with pytest.raises(ConfigError):
        parse_override("no-equals-sign")


def test_dict_round_trip_and_docs():
    for make in (cartpole, pendulum):
        cfg = make()
        assert from_dict(make(), to_dict(cfg)) == cfg
    docs = field_docs(AlgorithmConfig)
    assert all(docs.get(f.name) for f in dataclasses.fields(AlgorithmConfig))
    assert all(field_docs(GymEnvConfig).get(f.name) for f in dataclasses.fields(GymEnvConfig))
    text = "\n".join(describe(cartpole()))
    assert "algorithm.desired_kl=0.01" in text and "Target KL" in text


def test_total_iterations_from_env_steps():
    cfg = cartpole()
    assert cfg.total_iterations == -(-100_000 // (8 * 32))
