"""Moved config fields (``config_io.moved_key``): a saved dict's old key is read at its new place, at any depth; an
override with the old key is one line naming the new key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from contract.errors import ConfigError
from rl_core.config_io import apply_overrides, from_dict, moved_key, to_dict


@dataclass(frozen=True)
class Weights:
    reach: float = 1.0
    """A weight."""


@dataclass(frozen=True)
class Params:
    width: float = 0.25
    """A kernel width."""


@dataclass(frozen=True)
class Env:
    MOVED_KEYS: ClassVar[dict[str, str]] = {"weights.width": "params.width"}
    weights: Weights = field(default_factory=Weights)
    """Weights only."""
    params: Params = field(default_factory=Params)
    """What the terms read."""


@dataclass(frozen=True)
class Top:
    env: Env = field(default_factory=Env)
    """The env section."""


def test_an_old_key_maps_to_its_new_place_at_any_depth():
    assert moved_key(Top(), "env.weights.width") == "env.params.width"
    assert moved_key(Env(), "weights.width") == "params.width"
    for same in ("env.weights.reach", "env.params.width", "env.nothing.width", "other"):
        assert moved_key(Top(), same) == same
    old = {"env": {"weights": {"reach": 2.0, "width": 0.5}, "params": {}}}
    assert from_dict(Top(), old) == Top(Env(Weights(2.0), Params(0.5)))
    assert from_dict(Top(), to_dict(Top(Env(params=Params(0.1))))) == Top(Env(params=Params(0.1)))  # the new layout


def test_an_override_with_an_old_key_names_the_new_key():
    with pytest.raises(ConfigError, match=r"'env\.weights\.width' .*expected env\.params\.width \(the field's new"):
        apply_overrides(Top(), {"env.weights.width": 0.5})
    with pytest.raises(ConfigError, match="override key='env.weights.depth'"):  # an unknown key is still unknown
        apply_overrides(Top(), {"env.weights.depth": 0.5})


@dataclass(frozen=True)
class Later:
    ADDED_KEYS: ClassVar[dict[str, float]] = {"params.width": 0.5}
    params: Params = field(default_factory=lambda: Params(0.1))
    """Today's default width 0.1; configs saved before the field existed meant 0.5."""


@dataclass(frozen=True)
class LaterTop:
    env: Later = field(default_factory=Later)
    """The env section."""


def test_an_added_key_missing_from_a_saved_config_reads_as_the_value_the_code_used_before():
    assert from_dict(LaterTop(), {"env": {"params": {}}}) == LaterTop(Later(Params(0.5)))
    assert from_dict(LaterTop(), {"env": {"params": {"width": 0.2}}}) == LaterTop(Later(Params(0.2)))
    assert from_dict(LaterTop(), to_dict(LaterTop())) == LaterTop()  # a new file keeps today's value
