"""Left-right symmetry: the envs' mirrors (involutions, exact on states), the augmented batch, the switch's errors."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from contract.errors import ConfigError
from envs.robots.mirror import joint_mirror, twin
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import NoiseConfig, RandomizationConfig
from rl_core.config import AlgorithmConfig, PolicyConfig, TrainConfig
from rl_core.env_api import ActionSpec, Symmetric
from rl_core.modules.actor_critic import ActorCritic
from rl_core.ppo import PPO
from rl_core.symmetry import Mirrors, augment, on_normalized
from tests.helpers import transition
from tests.locomotion_tasks import make_task_env

N = 4


def quiet_env(task: str) -> LocomotionEnv:
    """The task's env with no noise, randomization or pushes, native backend, a few envs."""
    env = make_task_env(task, num_envs=N, backend="native", noise=NoiseConfig(scale=0.0),
                        randomization=RandomizationConfig(push_interval_s=0.0, init_base_vel=0.0))
    assert isinstance(env, Symmetric)
    return env


@pytest.mark.parametrize("task", ["quadruped-flat", "humanoid-flat"])
def test_mirror_twice_is_identity(task):
    env = quiet_env(task)
    obs = torch.randn(5, env.obs_dims["policy"])
    actions = torch.randn(5, env.action_spec.n)
    assert torch.equal(env.mirror_obs(env.mirror_obs(obs)), obs) and not torch.equal(env.mirror_obs(obs), obs)
    assert torch.equal(env.mirror_actions(env.mirror_actions(actions)), actions)


def test_quadruped_twins_and_signs():
    names = quiet_env("quadruped-flat").robot.joint_names
    m = joint_mirror(names)
    assert twin("FL_calf_joint") == "FR_calf_joint" and twin("RR_hip_joint") == "RL_hip_joint"
    for i, n in enumerate(names):
        assert names[m.perm[i]] == twin(n)
        assert m.sign[i] == (-1.0 if n.endswith("_hip_joint") else 1.0)  # abduction (about x) flips


@pytest.mark.parametrize("task", ["quadruped-flat", "humanoid-flat"])
def test_standing_observation_is_its_own_mirror(task):
    env = quiet_env(task)
    env.reset(seed=0)
    r = env.physics.read()
    qpos, qvel = r.qpos.clone(), torch.zeros_like(r.qvel)
    qpos[:, env.adr.base_quat] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    qpos[:, env.adr.joint_qpos] = env.default_joint_pos
    env.physics.reset(torch.ones(N, dtype=torch.bool), qpos, qvel)
    env.commands.zero_()
    env.state.last_actions.zero_()
    r = env.physics.read()
    obs = env.observe(r)["policy"]
    torch.testing.assert_close(env.mirror_obs(obs), obs, atol=1e-6, rtol=0.0)


def test_mirrored_quadruped_state_gives_the_mirrored_observation():
    """Env 0 moves to its left, yaws left, FL hip abducted; env 1 is its mirror image, built by hand."""
    env = quiet_env("quadruped-flat")
    env.reset(seed=0)
    names = env.robot.joint_names
    adr, dof = env.robot.joint_qpos_adr, env.robot.joint_dof_adr
    r = env.physics.read()
    qpos, qvel = r.qpos.clone(), torch.zeros_like(r.qvel)
    qpos[:, env.adr.base_quat] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    qpos[:, env.adr.joint_qpos] = env.default_joint_pos
    v = env.adr.base_linvel.start
    fl, fr = names.index("FL_hip_joint"), names.index("FR_hip_joint")
    thigh_fl, thigh_fr = names.index("FL_thigh_joint"), names.index("FR_thigh_joint")
    qpos[0, adr[fl]], qpos[0, adr[thigh_fl]] = 0.3, 1.1
    qvel[0, v:v + 6] = torch.tensor([0.4, 0.3, 0.05, 0.2, -0.1, 0.5])
    qvel[0, dof[fl]] = 0.7
    qpos[1, adr[fr]], qpos[1, adr[thigh_fr]] = -0.3, 1.1  # the mirror: FR hip the other way, same thigh
    qvel[1, v:v + 6] = torch.tensor([0.4, -0.3, 0.05, -0.2, -0.1, -0.5])  # linear (x,-y,z), angular (-x,y,-z)
    qvel[1, dof[fr]] = -0.7
    env.physics.reset(torch.tensor([True, True, False, False]), qpos, qvel)
    env.commands[0] = torch.tensor([0.5, 0.2, 0.8])
    env.commands[1] = torch.tensor([0.5, -0.2, -0.8])
    env.state.last_actions.zero_()
    env.state.last_actions[0, fl] = 0.4
    env.state.last_actions[1, fr] = -0.4
    r = env.physics.read()
    obs = env.observe(r)["policy"]
    torch.testing.assert_close(env.mirror_obs(obs[:1]), obs[1:2], atol=1e-5, rtol=0.0)


def _policy(n_obs=6, n_act=2, **fields):
    torch.manual_seed(0)
    return ActorCritic(n_obs, None, ActionSpec(discrete=False, n=n_act),
                       PolicyConfig(actor_hidden_dims=(16,), critic_hidden_dims=(16,), **fields))


def _flip(x: torch.Tensor) -> torch.Tensor:
    """A toy mirror: swap the two halves of the last axis and negate the first column of the result."""
    h = x.shape[-1] // 2
    out = torch.cat([x[..., h:], x[..., :h]], dim=-1)
    return torch.cat([-out[..., :1], out[..., 1:]], dim=-1)


def test_augmented_batch_is_twice_the_rows_and_its_second_half_is_the_mirror():
    n = 8
    batch = {"obs": torch.randn(n, 6), "actions": torch.randn(n, 2), "log_probs": torch.randn(n),
             "dist_params": torch.randn(n, 4), "values": torch.randn(n), "advantages": torch.randn(n),
             "returns": torch.randn(n), "weights": torch.ones(n)}
    batch["critic_obs"] = batch["obs"]
    out = augment(batch, _flip, _flip)
    assert all(v.shape[0] == 2 * n for v in out.values())
    assert torch.equal(out["obs"][n:], _flip(batch["obs"])) and torch.equal(out["actions"][n:], _flip(batch["actions"]))
    for k in ("log_probs", "dist_params", "values", "advantages", "returns", "weights"):
        assert torch.equal(out[k][:n], batch[k]) and torch.equal(out[k][n:], batch[k])
    assert torch.equal(out["obs"][:n], batch["obs"]) and out["kl_weights"][n:].sum() == 0


def test_mirror_of_normalized_observations_mirrors_the_raw_ones():
    policy = _policy()
    raw = torch.randn(64, 6) * 3.0 + 1.0
    policy.update_normalizers(raw, None)
    mirrored = on_normalized(_flip, policy.obs_normalizer)(policy.obs_normalizer(raw))
    torch.testing.assert_close(mirrored, policy.obs_normalizer(_flip(raw)), atol=1e-5, rtol=1e-5)


def test_config_errors():
    policy = _policy()
    with pytest.raises(ConfigError, match="algorithm.symmetry"):  # the env offers no mirror
        PPO(policy, AlgorithmConfig(symmetry="augment"), 1, torch.device("cpu"), 2, 2, torch.Generator())
    with pytest.raises(ConfigError, match="algorithm.symmetry"):  # a recurrent policy
        PPO(_policy(memory="gru"), AlgorithmConfig(symmetry="augment"), 1, torch.device("cpu"), 2, 2,
            torch.Generator(), mirrors=Mirrors(_flip, _flip))
    with pytest.raises(ConfigError, match="algorithm.symmetry"):
        TrainConfig(policy=PolicyConfig(memory="lstm"), algorithm=AlgorithmConfig(symmetry="augment"))
    assert "\n" not in str(ConfigError("algorithm.symmetry", "augment", "x"))


class FakeSymmetricEnv:
    """A tiny env whose mirror is ``_flip``: enough for the runner's wiring (never stepped)."""

    num_envs = 4
    obs_dims = {"policy": 6}
    action_spec = ActionSpec(discrete=False, n=2)
    device = torch.device("cpu")

    def mirror_obs(self, obs: torch.Tensor) -> torch.Tensor:
        return _flip(obs)

    def mirror_actions(self, actions: torch.Tensor) -> torch.Tensor:
        return _flip(actions)


def test_one_update_with_augment_runs():
    env = FakeSymmetricEnv()
    assert isinstance(env, Symmetric)
    policy = _policy()
    cfg = AlgorithmConfig(symmetry="augment", num_mini_batches=2, num_learning_epochs=1)
    T = 4
    alg = PPO(policy, cfg, 1, torch.device("cpu"), env.num_envs, T, torch.Generator().manual_seed(0),
              mirrors=Mirrors(env.mirror_obs, env.mirror_actions))
    s = alg.storage
    g = torch.Generator().manual_seed(0)
    for _ in range(T):
        obs = torch.randn(env.num_envs, 6, generator=g)
        with torch.no_grad():
            params, values = policy.params_and_value(obs, obs)
            actions = policy.head.sample(params, g)
        s.add(transition(obs, None, actions, policy.head.log_prob(params, actions), params, values,
              torch.randn(env.num_envs, generator=g), torch.zeros(env.num_envs, dtype=torch.bool),
              torch.zeros(env.num_envs, dtype=torch.bool), None))
    s.compute_returns(torch.zeros(env.num_envs), 0.99, 0.95)
    before = [p.detach().clone() for p in policy.parameters()]
    out = alg.update()
    assert out["num_minibatch_updates"].item() == 2 and out["nonfinite_updates"].item() == 0
    assert torch.isfinite(out["kl"])
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))


def test_runner_refuses_symmetry_for_an_env_without_a_mirror():
    from rl_core.runner import OnPolicyRunner

    class Plain(FakeSymmetricEnv):
        mirror_obs = None  # type: ignore[assignment]
        mirror_actions = None  # type: ignore[assignment]

    cfg = TrainConfig(algorithm=AlgorithmConfig(symmetry="augment", num_mini_batches=2))
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=4))
    with pytest.raises(ConfigError, match="algorithm.symmetry"):
        OnPolicyRunner(Plain(), cfg, "fake")  # type: ignore[arg-type]
