"""Left-right symmetry: the envs' mirrors of every observation group (involutions, exact on states), the augmented
batch (the critic's group mirrored with its own normalizer), the switch's errors, a training run with a critic group."""

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
from rl_core.symmetry import Mirrors, augment, mirrors_of, on_normalized
from tests.helpers import transition
from tests.locomotion_tasks import make_task_env
from tests.mirrored_states import mirrored_pair

N = 4


def quiet_env(task: str, **fields) -> LocomotionEnv:
    """The task's env with no noise, randomization or pushes, native backend, a few envs (and ``fields``)."""
    env = make_task_env(task, num_envs=N, backend="native", noise=NoiseConfig(scale=0.0),
                        randomization=RandomizationConfig(push_interval_s=0.0, init_base_vel=0.0), **fields)
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


CRITIC_GROUP_TASKS = [("quadruped-flat-proprio", {}), ("quadruped-flat", {"privileged_critic": True}),
                      ("humanoid-flat", {"policy_exclude": ("base_lin_vel",), "obs_history": 3})]
"""Tasks whose critic observes more than the policy: the proprioceptive task (no base velocity for the policy, 5
frames), a privileged critic (friction, added mass, gain factor), a biped with a history."""


@pytest.mark.parametrize("task,fields", CRITIC_GROUP_TASKS)
def test_the_mirror_of_each_group_is_that_groups_observation_of_the_mirrored_state(task, fields):
    env = quiet_env(task, **fields)
    obs = mirrored_pair(env)
    assert set(obs) == {"policy", "critic"} and obs["critic"].shape[1] > obs["policy"].shape[1] // env.history.frames
    for group, o in obs.items():
        assert not torch.allclose(o[0], o[1], atol=1e-2), group  # the state is not its own mirror
        torch.testing.assert_close(env.mirror_obs(o[:1], group), o[1:2], atol=1e-5, rtol=0.0)
        x = torch.randn(5, env.obs_dims[group])
        assert torch.equal(env.mirror_obs(env.mirror_obs(x, group), group), x), group
    if fields.get("privileged_critic"):  # the world's scalars stay
        assert torch.equal(env.mirror_obs(obs["critic"], "critic")[:, -3:], obs["critic"][:, -3:])
    with pytest.raises(ValueError, match="no observation group 'teacher'; allowed: policy, critic"):
        env.mirror_obs(obs["critic"], "teacher")


def test_a_task_with_a_height_scan_offers_no_mirror():
    env = make_task_env("quadruped-rough", num_envs=2, backend="native")
    assert not isinstance(env, Symmetric) and mirrors_of(env) is None


def _policy(n_obs=6, n_act=2, n_critic=None, **fields):
    torch.manual_seed(0)
    return ActorCritic(n_obs, n_critic, ActionSpec(discrete=False, n=n_act),
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

    def mirror_obs(self, obs: torch.Tensor, group: str = "policy") -> torch.Tensor:
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


def _fill(alg: PPO, policy: ActorCritic, n_critic: int, T: int) -> None:
    """A rollout of random observations (policy and critic groups) and the policy's actions, returns computed."""
    s, g = alg.storage, torch.Generator().manual_seed(0)
    for _ in range(T):
        obs, critic = torch.randn(4, 6, generator=g), torch.randn(4, n_critic, generator=g) * 2.0 + 1.0
        policy.update_normalizers(obs, critic)
        obs_n, critic_n = policy.obs_normalizer(obs), policy.critic_obs_normalizer(critic)
        with torch.no_grad():
            params, values = policy.params_and_value(obs_n, critic_n)
            actions = policy.head.sample(params, g)
        s.add(transition(obs_n, critic_n, actions, policy.head.log_prob(params, actions), params, values,
              torch.randn(4, generator=g), torch.zeros(4, dtype=torch.bool), torch.zeros(4, dtype=torch.bool), None))
    s.compute_returns(torch.zeros(4), 0.99, 0.95)


def test_augmented_batch_mirrors_the_critic_group_with_its_own_mirror():
    n = 8
    batch = {"obs": torch.randn(n, 6), "critic_obs": torch.randn(n, 10), "actions": torch.randn(n, 2),
             "log_probs": torch.randn(n), "dist_params": torch.randn(n, 4), "values": torch.randn(n),
             "advantages": torch.randn(n), "returns": torch.randn(n), "weights": torch.ones(n)}
    out = augment(batch, _flip, _flip, lambda x: -x)
    assert torch.equal(out["critic_obs"][:n], batch["critic_obs"]) and torch.equal(out["critic_obs"][n:],
                                                                                 -batch["critic_obs"])
    assert torch.equal(out["obs"][n:], _flip(batch["obs"]))
    assert torch.equal(out["values"][n:], batch["values"]) and torch.equal(out["returns"][n:], batch["returns"])


def test_an_asymmetric_actor_critic_needs_the_critics_mirror_and_uses_its_normalizer():
    policy = _policy(n_critic=10)
    with pytest.raises(ConfigError, match="mirrors the policy observations only"):
        PPO(policy, AlgorithmConfig(symmetry="augment"), 1, torch.device("cpu"), 4, 4, torch.Generator(),
            mirrors=Mirrors(_flip, _flip))
    cfg = AlgorithmConfig(symmetry="augment", num_mini_batches=2, num_learning_epochs=2)
    alg = PPO(policy, cfg, 1, torch.device("cpu"), 4, 4, torch.Generator().manual_seed(0),
              mirrors=Mirrors(_flip, _flip, _flip))
    _fill(alg, policy, 10, 4)
    raw = torch.randn(16, 10) * 2.0 + 1.0  # the critic's statistics differ from the policy's (6 columns)
    assert alg._mirror_critic_obs is not None
    torch.testing.assert_close(alg._mirror_critic_obs(policy.critic_obs_normalizer(raw)),
                               policy.critic_obs_normalizer(_flip(raw)), atol=1e-5, rtol=1e-5)
    critic_before = [p.detach().clone() for p in policy.critic_parameters()]
    out = alg.update()
    assert out["num_minibatch_updates"].item() == 4 and out["nonfinite_updates"].item() == 0
    assert any(not torch.equal(a, b) for a, b in zip(critic_before, policy.critic_parameters(), strict=True))


def test_training_an_asymmetric_task_with_augment_runs(tmp_path, capsys):
    import train

    run = tmp_path / "run"
    code = train.main(["--task", "quadruped-flat-proprio", "--max-iterations", "2", "--num-envs", "8", "--quiet",
                       "--run-dir", str(run), "runner.num_steps_per_env=4", "algorithm.symmetry=augment",
                       "algorithm.num_mini_batches=2", "env.backend=native"])
    assert code == 0, capsys.readouterr().err
    assert (run / "checkpoints" / "model_2.pt").exists()
