"""The task base's declarations: one observation table, task state declared once, reward terms by name.

Each derived thing (layout, noise, export scales, mirror, checkpoint, reset) is checked against the declaration
it comes from, and each check is shown to fail on a broken declaration.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
import torch

from contract.terms import FROM_READING
from envs.tasks.locomotion import observations, rewards
from envs.tasks.locomotion.config import LocomotionEnvConfig, RewardScales
from envs.tasks.locomotion.obs_table import TABLE, TERM_NAMES
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.obs_table import ObsTerm
from envs.tasks.observations import ObservationLayout
from envs.tasks.state import TaskState, per_env

CPU = torch.device("cpu")


@dataclass(eq=False)
class Toy(TaskState):
    clock: torch.Tensor = per_env(dtype=torch.long)
    """Steps."""
    memory: torch.Tensor = per_env("joints", reset="zero_finite")
    """Per joint."""
    flags: torch.Tensor = per_env(2, dtype=torch.bool)
    """Two flags."""
    drawn: torch.Tensor = per_env(3, reset="task")
    """The task's to draw."""


def test_a_declared_state_field_is_allocated_cleared_saved_and_restored():
    s = Toy.allocate(4, {"joints": 5}, CPU)
    assert Toy.names() == ("clock", "memory", "flags", "drawn")
    assert s.memory.shape == (4, 5) and s.flags.dtype == torch.bool and s.clock.dtype == torch.long
    s.clock += 7
    s.memory = torch.full((4, 5), float("nan"))
    s.flags = torch.ones(4, 2, dtype=torch.bool)
    s.drawn = torch.ones(4, 3)
    mask = torch.tensor([True, False, True, False])
    s.clear(mask)
    assert s.clock.tolist() == [0, 7, 0, 7]
    assert torch.equal(s.memory[1], torch.zeros(5))  # zero_finite: NaN cleared everywhere, zeroed where masked
    assert s.flags.tolist() == [[False, False], [True, True], [False, False], [True, True]]
    assert torch.equal(s.drawn, torch.ones(4, 3))  # the task's: untouched
    saved = s.state_dict()
    t = Toy.allocate(4, {"joints": 5}, CPU)
    t.load_state_dict(saved)
    assert all(torch.equal(getattr(t, n), getattr(s, n)) for n in Toy.names())
    t.load_state_dict({"clock": saved["clock"]})  # a field newer than the checkpoint keeps its value
    assert torch.equal(t.memory, s.memory)


def test_the_locomotion_state_is_what_checkpoints_hold_in_order():
    assert LocomotionState.names() == ("commands", "episode_length", "last_actions", "last_joint_vel", "air_time",
                                       "contact_time", "last_contacts", "max_travelled", "privileged", "heading",
                                       "action_delay", "past_frames", "action_queue")


def _layout(table, exclude=(), noise=1.0):
    cfg = LocomotionEnvConfig()
    return ObservationLayout(table, {"joints": 2, "scan": 0}, exclude, cfg, noise, CPU)


def test_the_layout_noise_export_and_mirror_come_from_the_table():
    table = (ObsTerm("a", 3, 2.0, "noise.lin_vel", mirror="vector"), ObsTerm("b", "joints", (1.0, 3.0)),
             ObsTerm("scan", "scan", 5.0, "height_scan.noise"),
             ObsTerm("c", 1, 0.5, "noise.joint_vel", clip="noise.gravity"))
    obs = _layout(table, exclude=("b",))
    assert obs.full == (("a", 3), ("b", 2), ("c", 1)) and obs.policy == (("a", 3), ("c", 1))  # size 0: left out
    assert obs.policy_columns is not None and obs.policy_columns.tolist() == [0, 1, 2, 5]
    cfg = LocomotionEnvConfig()
    expected = [cfg.noise.lin_vel * 2.0] * 3 + [0.0, 0.0] + [cfg.noise.joint_vel * 0.5]
    assert torch.allclose(obs.noise_vec, torch.tensor(expected))
    assert obs.export_scales() == {"a": 2.0, "b": [1.0, 3.0], "c": 0.5}
    assert obs.mirror_rules() == {"a": "vector", "b": "none", "c": "none"}
    values = {"a": torch.ones(4, 3), "b": torch.ones(4, 2), "c": torch.full((4, 1), 10.0)}
    exact = obs.exact(values)
    assert exact[0].tolist() == [2.0, 2.0, 2.0, 1.0, 3.0, 5.0]
    noisy = obs.noisy(exact, torch.Generator().manual_seed(0), 4)
    assert (noisy[:, 5] <= cfg.noise.gravity * 0.5 + 1e-7).all()  # clipped at clip x scale
    with pytest.raises(KeyError, match="'c' has no value"):
        obs.exact({"a": values["a"], "b": values["b"]})
    with pytest.raises(ValueError, match="'b' is 3 wide, the layout says 2"):
        obs.exact({**values, "b": torch.ones(4, 3)})


def test_every_locomotion_term_has_a_value_bound_and_a_deployment_builder():
    observations.check()
    # sim2sim and the robot-side runtime both build the terms from a reading through the contract
    assert set(TERM_NAMES) <= set(FROM_READING), "the contract cannot build every term of the table from a reading"
    assert all(t.mirror in ("vector", "axial", "command", "joints", "none") for t in TABLE)
    broken = dict(observations.BOUNDS)
    del broken["joint_vel"]
    original = observations.BOUNDS
    observations.BOUNDS = broken
    try:
        with pytest.raises(ValueError, match="without a bound: joint_vel"):
            observations.check()
    finally:
        observations.BOUNDS = original


def test_every_reward_weight_has_a_term_and_every_term_a_weight():
    from envs.tasks.locomotion.env import reward_weights

    weights = reward_weights(LocomotionEnvConfig())
    rewards.check_weights(weights)
    assert set(rewards.TERMS) == set(weights)  # one function per weight
    from contract.errors import UserError

    with pytest.raises(UserError, match="reward term 'alive' has no weight"):
        rewards.check_weights({k: v for k, v in weights.items() if k != "alive"})
    # weights_of tells a weight by its annotation: every field of RewardScales but the kernel width and the clip
    non_weights = {"tracking_sigma", "only_positive"}
    assert set(weights) == {f.name for f in dataclasses.fields(RewardScales)} - non_weights


def test_a_saved_state_shares_no_tensor_with_the_live_one():
    """state_dict then load_state_dict in memory (no file between): the two states step independently."""
    s = Toy.allocate(2, {"joints": 1}, CPU)
    saved = s.state_dict()
    s.clock += 1  # in place, as a step does
    assert saved["clock"].tolist() == [0, 0]
    t = Toy.allocate(2, {"joints": 1}, CPU)
    t.load_state_dict(saved)
    t.clock += 1
    assert saved["clock"].tolist() == [0, 0] and s.clock.tolist() == [1, 1]
