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
from envs.tasks.locomotion import rewards
from envs.tasks.locomotion.config import LocomotionEnvConfig, RewardScales
from envs.tasks.locomotion.obs_table import TABLE, TERM_NAMES
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.obs_table import ObsTerm, declared
from envs.tasks.observations import BOUND_MARGIN, FLOAT32_MAX, ObservationLayout
from envs.tasks.reach import observations as reach_obs
from envs.tasks.state import TaskState, per_env
from envs.tasks.track import observations as track_obs

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


OLD_CHECKPOINT_STATE = ("commands", "episode_length", "last_actions", "last_joint_vel", "air_time", "contact_time",
                        "last_contacts", "max_travelled", "privileged", "heading", "action_delay", "past_frames",
                        "action_queue")
"""The task state keys of a locomotion checkpoint written before feet_air_time owned its clocks (d5dbfc3)."""


def test_the_locomotion_state_is_what_checkpoints_hold_in_order():
    """The family's fields, then those its stateful reward terms own; every key of an older checkpoint is one."""
    state = LocomotionState.merged(*rewards.TERMS.owned_states())
    assert state.names() == ("commands", "episode_length", "last_actions", "last_joint_vel", "max_travelled",
                             "privileged", "heading", "action_delay", "past_frames", "action_queue", "air_time",
                             "contact_time", "last_contacts")
    assert set(state.names()) == set(OLD_CHECKPOINT_STATE)
    sizes = {"joints": 2, "feet": 4, "history": 0, "delay": 1}
    old = {n: torch.full_like(v, 1) for n, v in state.allocate(3, sizes, CPU).state_dict().items()}
    s = state.allocate(3, sizes, CPU)
    s.load_state_dict({n: old[n] for n in OLD_CHECKPOINT_STATE})
    assert s.state_dict().keys() == old.keys() and all(torch.equal(getattr(s, n), old[n]) for n in old)
    assert rewards.clocks(s).air_time.shape == (3, 4) and s.last_contacts.dtype == torch.bool


def test_a_term_owned_field_merges_once():
    assert LocomotionState.merged() is LocomotionState
    with pytest.raises(ValueError, match=r"field\(s\) clock, memory, flags, drawn of Toy are declared twice"):
        Toy.merged(Toy)


def _layout(table, exclude=(), noise=1.0):
    cfg = LocomotionEnvConfig()
    return ObservationLayout(table, {"joints": 2, "scan": 0}, exclude, cfg, noise, CPU)


def _read(name):
    return lambda x: x[name]


def test_the_layout_values_noise_bounds_export_and_mirror_come_from_the_table():
    table = (ObsTerm("a", 3, 2.0, _read("a"), lambda b, n: [b] * n, lambda c: c.noise.lin_vel, mirror="vector"),
             ObsTerm("b", "joints", (1.0, 3.0), _read("b"), lambda b, n: [1.0, 2.0]),
             ObsTerm("scan", "scan", 5.0, _read("scan"), noise=lambda c: c.height_scan.noise),
             ObsTerm("c", 1, 0.5, _read("c"), noise=lambda c: c.noise.joint_vel, clip=lambda c: c.noise.gravity))
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
    with pytest.raises(ValueError, match="'b' is 3 wide, the layout says 2"):
        obs.exact({**values, "b": torch.ones(4, 3)})
    # bounds: physical units x scale (once), with the margin; a row without a bound gets the family's limit
    bound = obs.bounds(4.0, unbounded=7.0)
    expected_bound = torch.tensor([8.0] * 3 + [1.0, 6.0], dtype=torch.float32) * BOUND_MARGIN
    assert torch.equal(bound[:5], expected_bound) and bound[5].item() == 7.0
    assert obs.bounds(4.0)[5].item() == FLOAT32_MAX  # no limit: only a non-finite value fails
    # the shared ending: exact, the policy's noisy columns made finite, the check against the bounds
    values["a"] = torch.tensor([[4.0, 0.0, 0.0], [4.1, 0.0, 0.0], [float("nan"), 0.0, 0.0], [0.0, 0.0, 0.0]])
    out = obs.observe(values, bound, torch.Generator().manual_seed(0), 4)
    assert out.bad is not None and out.bad.tolist() == [False, True, True, False]
    assert out.policy.shape == (4, 4) and torch.isfinite(out.policy).all()


def test_a_broken_row_fails_where_it_is_declared_or_first_read():
    row = ObsTerm("joint_vel", "joints", 0.05, _read("joint_vel"), lambda b, n: [1.0] * n)
    assert declared((row,), bounded=True) == (row,)
    with pytest.raises(ValueError, match="not declared in contract/terms.py"):
        declared((dataclasses.replace(row, name="joint_speed"),))
    with pytest.raises(ValueError, match="without a value: joint_vel"):
        declared((dataclasses.replace(row, value=None),))
    with pytest.raises(ValueError, match="without a bound: joint_vel"):
        declared((dataclasses.replace(row, bound=None),), bounded=True)
    with pytest.raises(ValueError, match="'joint_vel': 3 bounds for 2 columns"):
        _layout((dataclasses.replace(row, bound=lambda b, n: [1.0] * 3),)).bounds(None)
    with pytest.raises(ValueError, match="joint_vel: 3 scales for 2 columns"):
        _layout((dataclasses.replace(row, scale=(1.0, 1.0, 1.0)),))


def test_every_locomotion_term_has_a_value_bound_and_a_deployment_builder():
    assert declared(TABLE, bounded=True) == TABLE
    # sim2sim and the robot-side runtime both build the terms from a reading through the contract
    assert set(TERM_NAMES) <= set(FROM_READING), "the contract cannot build every term of the table from a reading"
    assert all(t.mirror in ("vector", "axial", "command", "joints", "none") for t in TABLE)
    assert all(declared(t) for t in (reach_obs.TABLE, track_obs.TABLE))


def test_every_reward_weight_has_a_term_and_every_term_a_weight():
    from envs.tasks.locomotion.env import reward_weights

    weights = reward_weights(LocomotionEnvConfig())
    rewards.check_weights(weights)
    assert set(rewards.TERMS) == set(weights)  # one function per weight
    from contract.errors import UserError

    with pytest.raises(UserError, match="reward term 'alive' has no weight"):
        rewards.check_weights({k: v for k, v in weights.items() if k != "alive"})
    # RewardScales holds weights only: every field is a term's weight (tests/envs/tasks/test_reward_config.py)
    assert set(weights) == {f.name for f in dataclasses.fields(RewardScales)}


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


def test_a_checkpoint_of_the_old_state_layout_resumes_the_clocks_exactly():
    """A locomotion env's state saved with the task state keys in the order of a checkpoint written before the
    feet's clocks moved into feet_air_time (OLD_CHECKPOINT_STATE) resumes them, and the next steps are the same."""
    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv

    cfg = LocomotionEnvConfig(num_envs=4, backend="native")
    env, other = LocomotionEnv(cfg, QUADRUPED), LocomotionEnv(cfg, QUADRUPED)
    env.reset(seed=1)
    g = torch.Generator().manual_seed(0)
    for _ in range(10):
        env.step(torch.randn(4, env.action_spec.n, generator=g))
    saved = env.state_dict()
    assert rewards.clocks(env.state).air_time.abs().sum() > 0  # the clocks have moved
    saved["task"] = {n: saved["task"][n] for n in (*OLD_CHECKPOINT_STATE, *saved["task"])}  # the old order
    other.load_state_dict(saved)
    for name in ("air_time", "contact_time", "last_contacts"):
        assert torch.equal(getattr(other.state, name), getattr(env.state, name))
    actions = torch.randn(4, env.action_spec.n, generator=g)
    a, b = env.step(actions), other.step(actions)
    assert torch.equal(a[0]["policy"], b[0]["policy"]) and torch.equal(a[1], b[1])
    env.close()
    other.close()
