"""Training defaults that make a policy survive the hardware: action latency, motor strength, kp and kd factors.

Each is off by default (nothing drawn, the task's rollout unchanged: ``tools/experiments/rollout_hash.py``); on, it acts
on the physics as the rehearsal's changes act on the simulated robot.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from configs.catalog import get_task
from configs.locomotion import DEPLOY_RAMP_STEPS, deploy_env
from contract.errors import UserError
from envs.robots.quadruped import QUADRUPED
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig, RandomizationConfig
from envs.tasks.locomotion.randomization import fields_of
from rl_core import checkpoint as ckpt
from rl_core.config_io import to_dict
from tests.helpers import model_field

N = 4


def _env(**randomization) -> LocomotionEnv:
    rnd = dataclasses.replace(RandomizationConfig(push_interval_s=0.0), **randomization)
    cfg = LocomotionEnvConfig(num_envs=N, backend="native", physics_threads=1, randomization=rnd,
                              randomize_initial_episode_length=False)
    env = LocomotionEnv(cfg, QUADRUPED)
    env.reset(seed=0)
    return env


def _ctrl(env: LocomotionEnv) -> torch.Tensor:
    return env.physics.state_dict()["ctrl"].float()


def test_a_delayed_env_applies_the_action_chosen_that_many_steps_before():
    env = _env(action_delay=(2, 2))
    assert env.state.action_delay.tolist() == [2] * N and env.state.action_queue.shape == (N, 2, 12)
    actions = [torch.full((N, 12), 0.1 * (k + 1)) for k in range(5)]
    default = env.default_joint_pos
    for k, a in enumerate(actions):
        env.step(a)
        applied = torch.zeros(N, 12) if k < 2 else actions[k - 2]  # before the first actions: the default pose
        assert torch.allclose(_ctrl(env), default + env.action_scale * applied, atol=1e-6), k
        assert torch.equal(env.state.last_actions, a)  # the policy observes its own latest action


def test_without_delay_the_action_applies_at_once_and_no_queue_is_kept():
    env = _env()
    assert env.state.action_queue.shape == (N, 0, 12)
    a = torch.full((N, 12), 0.3)
    env.step(a)
    assert torch.allclose(_ctrl(env), env.default_joint_pos + env.action_scale * a, atol=1e-6)


def test_delays_are_drawn_per_env_within_the_range():
    env = _env(action_delay=(0, 3))
    env.reset_envs(torch.ones(N, dtype=torch.bool))
    seen = set()
    for _ in range(20):
        env.reset_envs(torch.ones(N, dtype=torch.bool))
        seen |= set(env.state.action_delay.tolist())
    assert seen == {0, 1, 2, 3}


def test_motor_strength_scales_stiffness_damping_and_torque_limit_together():
    env = _env(motor_strength=(0.5, 0.5), gain_scale=(1.0, 1.0))
    m = env.model
    assert "actuator_forcerange" in fields_of(env.cfg.randomization)
    force = model_field(env.physics, "actuator_forcerange")
    assert torch.allclose(force, 0.5 * torch.tensor(m.actuator_forcerange, dtype=torch.float32).expand(N, -1, -1))
    gain = model_field(env.physics, "actuator_gainprm")[:, :, 0]
    bias = model_field(env.physics, "actuator_biasprm")
    kp = torch.tensor(m.actuator_gainprm[:, 0], dtype=torch.float32)
    kd = torch.tensor(-m.actuator_biasprm[:, 2], dtype=torch.float32)
    assert torch.allclose(gain, 0.5 * kp) and torch.allclose(-bias[:, :, 1], 0.5 * kp)
    assert torch.allclose(-bias[:, :, 2], 0.5 * kd)


def test_kp_and_kd_factors_act_on_their_own_gain_only():
    env = _env(kp_scale=(0.8, 0.8), kd_scale=(2.0, 2.0), gain_scale=(1.0, 1.0))
    m = env.model
    assert "actuator_forcerange" not in fields_of(env.cfg.randomization)
    bias = model_field(env.physics, "actuator_biasprm")
    assert torch.allclose(model_field(env.physics, "actuator_gainprm")[:, :, 0],
                          0.8 * torch.tensor(m.actuator_gainprm[:, 0], dtype=torch.float32))
    assert torch.allclose(-bias[:, :, 2], 2.0 * torch.tensor(-m.actuator_biasprm[:, 2], dtype=torch.float32))


def _strength(env: LocomotionEnv) -> torch.Tensor:
    """Each env's drawn motor strength: its torque limit over the model's."""
    force = model_field(env.physics, "actuator_forcerange")[:, 0, 1]
    return force / float(env.model.actuator_forcerange[0, 1])


def test_the_hardware_ramp_widens_strength_gains_and_latency_from_none_to_their_ranges():
    ramp = 10
    env = _env(motor_strength=(0.5, 1.5), kd_scale=(0.5, 1.5), action_delay=(1, 3), gain_scale=(1.0, 1.0),
               hardware_ramp_steps=ramp)
    everyone = torch.ones(N, dtype=torch.bool)
    assert torch.allclose(_strength(env), torch.ones(N)) and env.state.action_delay.tolist() == [1] * N  # step 0
    spans = []
    for steps in (0, ramp // 2, ramp, 3 * ramp):
        env.randomizer.steps.fill_(steps)
        strength, delays = [], set()
        for _ in range(30):
            env.reset_envs(everyone)
            strength.append(_strength(env))
            delays |= set(env.state.action_delay.tolist())
        s = torch.cat(strength)
        spans.append((round(float((s - 1).abs().max()), 2), sorted(delays)))
    share = [min(1.0, k / ramp) for k in (0, ramp // 2, ramp, 3 * ramp)]
    assert all(span <= 0.5 * f + 1e-6 for (span, _), f in zip(spans, share, strict=True)), spans
    assert spans[1][0] > 0.2 and spans[2][0] > 0.45 and spans[3][0] > 0.45, spans  # half, then all of it
    assert [d for _, d in spans] == [[1], [1, 2], [1, 2, 3], [1, 2, 3]], spans


def test_the_ramp_counts_control_steps_on_the_device_and_a_resume_goes_on_from_there():
    env = _env(motor_strength=(0.8, 1.2), hardware_ramp_steps=100)
    for _ in range(7):
        env.step(torch.zeros(N, 12))
    assert int(env.randomizer.steps) == 7
    saved = env.state_dict()
    env.step(torch.zeros(N, 12))  # the saved count is a copy, not the live tensor
    again = _env(motor_strength=(0.8, 1.2), hardware_ramp_steps=100)
    again.load_state_dict(saved)
    assert int(again.randomizer.steps) == 7
    off = _env(motor_strength=(0.8, 1.2))
    off.step(torch.zeros(N, 12))
    assert int(off.randomizer.steps) == 0  # no ramp: no count (not one op more per step)


def test_a_deployable_task_ramps_and_a_config_saved_before_the_ramp_reads_none():
    assert deploy_env().randomization.hardware_ramp_steps == DEPLOY_RAMP_STEPS > 0
    assert LocomotionEnvConfig().randomization.hardware_ramp_steps == 0  # every other task: none
    cfg = dataclasses.replace(get_task("quadruped-flat").default_config(), env=deploy_env())
    old = to_dict(cfg)
    del old["env"]["randomization"]["hardware_ramp_steps"]
    assert ckpt.read_config({"config": old}, cfg, "old.pt").env.randomization.hardware_ramp_steps == 0


@pytest.mark.parametrize("field, value", [("action_delay", [-1, 2]), ("action_delay", [3, 1]),
                                          ("motor_strength", [0.0, 1.2]), ("kp_scale", [1.2, 0.8]),
                                          ("hardware_ramp_steps", -1)])
def test_a_bad_range_is_one_line_naming_the_field(field, value):
    with pytest.raises(UserError, match=f"env.randomization.{field}"):
        RandomizationConfig(**{field: value})
