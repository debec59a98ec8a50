"""PPO loss identities, the adaptive learning-rate rule, and an update that changes what it should."""

import dataclasses

import torch

from rl_core.config import AlgorithmConfig, PolicyConfig
from rl_core.env_api import ActionSpec
from rl_core.modules.actor_critic import ActorCritic
from rl_core.ppo import PPO, adaptive_lr, ppo_loss
from rl_core.storage import RolloutStorage
from tests.helpers import transition


def make_batch(policy, n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(n, policy.obs_dim, generator=g)
    with torch.no_grad():
        params = policy.dist_params(obs)
        actions = policy.head.sample(params, g)
        values = policy.value(obs)
    return {
        "obs": obs, "critic_obs": obs, "actions": actions, "log_probs": policy.head.log_prob(params, actions),
        "dist_params": params, "values": values, "advantages": torch.randn(n, generator=g),
        "returns": values + torch.randn(n, generator=g), "weights": torch.ones(n),
    }


def policy_of(discrete=False):
    spec = ActionSpec(discrete=True, n=3) if discrete else ActionSpec(discrete=False, n=2)
    torch.manual_seed(0)
    return ActorCritic(4, None, spec, PolicyConfig(actor_hidden_dims=(16,), critic_hidden_dims=(16,)))


def test_loss_at_old_policy_is_minus_mean_advantage():
    for discrete in (False, True):
        policy = policy_of(discrete)
        batch = make_batch(policy)
        cfg = AlgorithmConfig(entropy_coef=0.0, value_loss_coef=0.0)
        loss, m = ppo_loss(policy, batch, cfg)
        torch.testing.assert_close(m["surrogate_loss"], -batch["advantages"].mean())
        torch.testing.assert_close(loss, -batch["advantages"].mean())
        assert abs(m["kl"].item()) < 1e-6 and m["clip_fraction"].item() == 0.0


def test_policy_gradient_at_ratio_one_is_vanilla_pg():
    policy = policy_of()
    batch = make_batch(policy)
    cfg = AlgorithmConfig(entropy_coef=0.0, value_loss_coef=0.0)
    loss, _ = ppo_loss(policy, batch, cfg)
    g1 = torch.autograd.grad(loss, policy.head.log_std)[0]
    logp = policy.head.log_prob(policy.dist_params(batch["obs"]), batch["actions"])
    g2 = torch.autograd.grad(-(batch["advantages"] * logp).mean(), policy.head.log_std)[0]
    torch.testing.assert_close(g1, g2)


def test_clipped_ratio_has_no_gradient():
    policy = policy_of()
    batch = make_batch(policy)
    batch["advantages"] = torch.ones_like(batch["advantages"])
    batch["log_probs"] = batch["log_probs"] - 1.0  # ratio = e > 1 + clip for every sample, A > 0: clipped
    cfg = AlgorithmConfig(entropy_coef=0.0, value_loss_coef=0.0)
    loss, m = ppo_loss(policy, batch, cfg)
    assert m["clip_fraction"].item() == 1.0
    grads = torch.autograd.grad(loss, [p for p in policy.actor.parameters()] + [policy.head.log_std], allow_unused=True)
    assert all(g is None or torch.count_nonzero(g) == 0 for g in grads)


def test_value_loss_clipping():
    policy = policy_of()
    batch = make_batch(policy)
    cfg = AlgorithmConfig(entropy_coef=0.0, value_loss_coef=1.0)
    unclipped = dataclasses.replace(cfg, use_clipped_value_loss=False)
    # Old values equal to the current ones: clipping changes nothing.
    torch.testing.assert_close(ppo_loss(policy, batch, cfg)[1]["value_loss"],
                               ppo_loss(policy, batch, unclipped)[1]["value_loss"])
    # Old values far away: the clipped prediction sits at old +- clip, and max() picks the larger error.
    with torch.no_grad():
        v = policy.value(batch["obs"])
    batch["values"] = v + 10.0
    batch["returns"] = v + 10.0
    clipped_loss = ppo_loss(policy, batch, cfg)[1]["value_loss"]
    torch.testing.assert_close(clipped_loss, torch.tensor(100.0))


def test_entropy_bonus_sign():
    policy = policy_of()
    batch = make_batch(policy)
    cfg = AlgorithmConfig(entropy_coef=1.0, value_loss_coef=0.0)
    loss, m = ppo_loss(policy, batch, cfg)
    torch.testing.assert_close(loss, m["surrogate_loss"] - m["entropy"])


def test_adaptive_lr_rule():
    lr = torch.tensor(1e-3)
    assert torch.isclose(adaptive_lr(lr, torch.tensor(0.05), 0.01), torch.tensor(1e-3 / 1.5))
    assert torch.isclose(adaptive_lr(lr, torch.tensor(0.001), 0.01), torch.tensor(1.5e-3))
    assert torch.isclose(adaptive_lr(lr, torch.tensor(0.01), 0.01), lr)
    assert torch.isclose(adaptive_lr(lr, torch.tensor(0.0), 0.01), lr)
    assert torch.isclose(adaptive_lr(torch.tensor(1e-5), torch.tensor(1.0), 0.01), torch.tensor(1e-5))
    assert torch.isclose(adaptive_lr(torch.tensor(1e-2), torch.tensor(0.0001), 0.01), torch.tensor(1e-2))


def ppo(policy, cfg, storage, seed=0):
    """A PPO that learns from ``storage`` (filled by hand), its minibatches shuffled from ``seed``."""
    alg = PPO(policy, cfg, 10, torch.device("cpu"), storage.N, storage.T, torch.Generator().manual_seed(seed))
    alg.storage = storage
    return alg


def _storage(policy, T=8, N=16):
    s = RolloutStorage(T, N, torch.device("cpu"))
    g = torch.Generator().manual_seed(0)
    for _ in range(T):
        b = make_batch(policy, N, seed=int(torch.randint(0, 10**6, (1,), generator=g)))
        no = torch.zeros(N, dtype=torch.bool)
        s.add(transition(b["obs"], None, b["actions"], b["log_probs"], b["dist_params"], b["values"],
                         torch.randn(N, generator=g), torch.rand(N, generator=g) < 0.1, no))
    s.compute_returns(torch.zeros(N), 0.99, 0.95)
    return s


def test_update_changes_parameters_and_applies_schedules():
    for schedule in ("fixed", "adaptive", "linear"):
        policy = policy_of()
        cfg = AlgorithmConfig(schedule=schedule, num_mini_batches=4, num_learning_epochs=2, learning_rate=1e-3)
        alg = ppo(policy, cfg, _storage(policy))
        before = [p.detach().clone() for p in policy.parameters()]
        alg.set_iteration(5)
        out = alg.update()
        assert out["num_minibatch_updates"].item() == 8
        assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))
        if schedule == "fixed":
            assert abs(out["learning_rate"].item() - 1e-3) < 1e-9
        if schedule == "linear":
            assert abs(out["learning_rate"].item() - 5e-4) < 1e-9


def test_target_kl_stops_early():
    policy = policy_of()
    cfg = AlgorithmConfig(schedule="fixed", learning_rate=0.05, num_mini_batches=4, num_learning_epochs=5,
                          target_kl=1e-6)
    out = ppo(policy, cfg, _storage(policy)).update()
    assert out["num_minibatch_updates"].item() < 20


def _scaled_storage(policy, scale, T=8, N=16):
    """The same rollout with rewards and old values times ``scale``: identical normalized advantages,
    value-loss gradients about ``scale`` times larger."""
    s = RolloutStorage(T, N, torch.device("cpu"))
    g = torch.Generator().manual_seed(0)
    for _ in range(T):
        b = make_batch(policy, N, seed=int(torch.randint(0, 10**6, (1,), generator=g)))
        s.add(transition(b["obs"], None, b["actions"], b["log_probs"], b["dist_params"], b["values"] * scale,
              torch.randn(N, generator=g) * scale, torch.zeros(N, dtype=torch.bool), torch.zeros(N, dtype=torch.bool),
              None))
    s.compute_returns(torch.zeros(N), 0.99, 0.95)
    return s


def test_per_network_clipping_keeps_the_actor_step_independent_of_the_value_loss():
    def actor_after(scale, per_network):
        torch.manual_seed(0)
        policy = policy_of()
        cfg = AlgorithmConfig(schedule="fixed", num_mini_batches=1, num_learning_epochs=1, learning_rate=1e-2,
                              max_grad_norm=0.5, clip_grad_per_network=per_network)
        ppo(policy, cfg, _scaled_storage(policy, scale)).update()
        return torch.cat([p.detach().flatten() for p in policy.actor.parameters()])

    torch.testing.assert_close(actor_after(1000.0, True), actor_after(1.0, True), atol=1e-5, rtol=0)
    assert not torch.allclose(actor_after(1000.0, False), actor_after(1.0, False), atol=1e-5)


def _update_once(compile: bool) -> dict[str, torch.Tensor]:
    policy = policy_of()
    g = torch.Generator().manual_seed(1)
    storage = RolloutStorage(8, 4, torch.device("cpu"))
    with torch.no_grad():
        for _ in range(8):
            obs = torch.randn(4, 4, generator=g)
            params, values = policy.params_and_value(obs, obs)
            actions = policy.head.sample(params, g)
            storage.add(transition(obs, None, actions, policy.head.log_prob(params, actions), params, values,
                        torch.randn(4, generator=g), torch.rand(4, generator=g) < 0.1,
                        torch.zeros(4, dtype=torch.bool), None))
        storage.compute_returns(values, 0.99, 0.95)
    ppo(policy, AlgorithmConfig(num_learning_epochs=2, num_mini_batches=2, compile=compile), storage, seed=2).update()
    return {k: v.clone() for k, v in policy.state_dict().items()}


def test_compiled_update_is_the_same_math():
    """algorithm.compile=true (and the compiled matmul + bias form of the linear layers) changes speed, not results."""
    eager, compiled = _update_once(False), _update_once(True)
    assert eager.keys() == compiled.keys()
    for k in eager:
        torch.testing.assert_close(compiled[k], eager[k], atol=1e-5, rtol=1e-5)
    assert not torch.equal(eager["actor.0.weight"], policy_of().state_dict()["actor.0.weight"])  # it did learn
