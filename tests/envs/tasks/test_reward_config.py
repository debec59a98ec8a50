"""Reward weights apart from reward parameters (issue 49): every field of a task's weights class is a weight, the
locomotion kernel width, total clip and air-time offset are ``env.reward_params`` fields, and a config written
before they moved (checkpoint format 2) is read with their values at the new place."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

import pytest
import torch

from configs.catalog import get_task, registered
from contract.errors import ConfigError
from envs.tasks.locomotion.config import LocomotionEnvConfig, RewardParams
from envs.tasks.reward_terms import weights_of
from rl_core import checkpoint as ckpt
from rl_core.config_io import apply_overrides, to_dict


def not_weights(cls: type) -> list[str]:
    """The fields of a weights dataclass that are not weights (annotated other than ``float``)."""
    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if hints[f.name] is not float]


def test_every_registered_tasks_weights_class_holds_only_weights():
    checked = set()
    for name, spec in registered().items():
        rewards = getattr(spec.default_config().env, "rewards", None)
        if rewards is None:
            continue  # a Gymnasium task: its rewards are the game's
        assert not_weights(type(rewards)) == [], f"{name}: {type(rewards).__name__} holds non-weights"
        weights = weights_of(rewards)
        assert list(weights) == [f.name for f in dataclasses.fields(rewards)]
        assert all(type(w) is float for w in weights.values()), name
        checked.add(type(rewards).__name__)
    assert checked >= {"RewardScales", "ReachRewardScales", "TrackRewardScales"}  # every family was seen


def test_the_weights_check_catches_a_parameter_among_the_weights() -> None:
    @dataclass(frozen=True)
    class Mixed:
        tracking: float = 1.0
        sigma: float = 0.25
        only_positive: bool = True
        window: tuple[float, float] = (0.0, 1.0)

    assert not_weights(Mixed) == ["only_positive", "window"]  # a bool or a range is refused; a float cannot be told


def _old_style(task: str) -> dict:
    """The task's default config as a dict written before the move (format 2): the two keys under env.rewards."""
    old = to_dict(get_task(task).default_config())
    params = old["env"]["reward_params"]
    old["env"]["rewards"]["tracking_sigma"] = 0.3
    old["env"]["rewards"]["only_positive"] = False
    del params["tracking_sigma"], params["only_positive"], params["air_time_offset"]
    return old


def test_an_old_locomotion_config_is_read_with_the_moved_values_at_their_new_place():
    for task in ("quadruped-flat", "humanoid-flat"):
        spec = get_task(task)
        cfg = ckpt.read_config({"config": _old_style(task)}, spec.default_config(), "old.pt")
        params = cfg.env.reward_params
        assert (params.tracking_sigma, params.only_positive, params.air_time_offset) == (0.3, False, 0.5)
        assert cfg.env.rewards == spec.default_config().env.rewards  # the weights as written
    # the new layout round-trips unchanged
    cfg = get_task("quadruped-flat").default_config()
    assert ckpt.read_config({"config": to_dict(cfg)}, cfg, "new.pt") == cfg


def test_an_override_with_an_old_key_is_one_line_naming_the_new_key():
    cfg = get_task("quadruped-flat").default_config()
    for old in ("tracking_sigma", "only_positive"):
        line = rf"override key='env\.rewards\.{old}' .*expected env\.reward_params\.{old} \(the field's new key\)"
        with pytest.raises(ConfigError, match=line):
            apply_overrides(cfg, {f"env.rewards.{old}": 0.3})
    new = apply_overrides(cfg, {"env.reward_params.tracking_sigma": 0.3, "env.reward_params.air_time_offset": 0.2})
    assert (new.env.reward_params.tracking_sigma, new.env.reward_params.air_time_offset) == (0.3, 0.2)
    with pytest.raises(ConfigError, match=r"env\.reward_params\.air_time_offset=-0\.1 is not allowed"):
        apply_overrides(cfg, {"env.reward_params.air_time_offset": -0.1})


def _air_time_rewards(offset: float) -> torch.Tensor:
    """The quadruped's feet_air_time reward of each of 40 seeded steps (mean over the envs, weighted) with
    ``air_time_offset``: the term does not act on the physics, so both runs take the same steps."""
    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv

    cfg = LocomotionEnvConfig(num_envs=8, backend="native", reward_params=RewardParams(air_time_offset=offset))
    env = LocomotionEnv(cfg, QUADRUPED)
    env.reset(seed=2)
    g = torch.Generator().manual_seed(0)
    out = []
    for _ in range(40):
        *_, info = env.step(torch.randn(8, env.action_spec.n, generator=g))
        out.append(info["log"]["rew_feet_air_time"].clone())
    return torch.stack(out)


def test_the_air_time_offset_reaches_the_env_term():
    base, shorter = _air_time_rewards(0.5), _air_time_rewards(0.2)
    landed = base != 0
    assert landed.any()  # touchdowns happened while moving
    assert torch.all(shorter[landed] > base[landed])  # each landing earns more with a smaller offset
