"""GAE against a naive per-env, per-step loop, including terminated and truncated transitions."""

import torch

from rl_core.gae import compute_gae


def naive_gae(rewards, values, terminated, truncated, final_values, last_values, gamma, lam):
    T, N = rewards.shape
    adv = torch.zeros(T, N, dtype=torch.float64)
    for n in range(N):
        for t in range(T):
            # Sum the discounted TD errors forward until the episode (or the rollout) ends.
            total, discount = 0.0, 1.0
            for k in range(t, T):
                if terminated[k, n]:
                    next_v = 0.0
                elif truncated[k, n]:
                    next_v = float(final_values[k, n])
                elif k + 1 < T:
                    next_v = float(values[k + 1, n])
                else:
                    next_v = float(last_values[n])
                delta = float(rewards[k, n]) + gamma * next_v - float(values[k, n])
                total += discount * delta
                if terminated[k, n] or truncated[k, n]:
                    break
                discount *= gamma * lam
            adv[t, n] = total
    return adv


def test_gae_matches_naive_loop_with_terminations_and_truncations():
    g = torch.Generator().manual_seed(0)
    T, N = 17, 6
    rewards = torch.randn(T, N, generator=g, dtype=torch.float64)
    values = torch.randn(T, N, generator=g, dtype=torch.float64)
    final_values = torch.randn(T, N, generator=g, dtype=torch.float64)
    last_values = torch.randn(N, generator=g, dtype=torch.float64)
    terminated = torch.rand(T, N, generator=g) < 0.15
    truncated = torch.rand(T, N, generator=g) < 0.15
    terminated[3, 0] = truncated[3, 0] = True  # both: counts as terminated
    adv, ret = compute_gae(rewards, values, terminated, truncated, final_values, last_values, 0.97, 0.9)
    expected = naive_gae(rewards, values, terminated, truncated, final_values, last_values, 0.97, 0.9)
    torch.testing.assert_close(adv, expected)
    torch.testing.assert_close(ret, expected + values)


def test_truncation_bootstraps_from_final_value_not_next_obs():
    rewards = torch.tensor([[1.0], [1.0]])
    values = torch.tensor([[0.0], [100.0]])  # value of the reset observation: must not leak into step 0
    term = torch.zeros(2, 1, dtype=torch.bool)
    trunc = torch.tensor([[True], [False]])
    final_values = torch.tensor([[5.0], [0.0]])
    adv, _ = compute_gae(rewards, values, term, trunc, final_values, torch.tensor([0.0]), gamma=0.5, lam=1.0)
    assert adv[0, 0].item() == 1.0 + 0.5 * 5.0 - 0.0


def test_termination_does_not_bootstrap():
    rewards = torch.tensor([[1.0], [1.0]])
    values = torch.tensor([[0.0], [100.0]])
    term = torch.tensor([[True], [False]])
    trunc = torch.zeros(2, 1, dtype=torch.bool)
    adv, _ = compute_gae(rewards, values, term, trunc, torch.full((2, 1), 7.0), torch.tensor([0.0]), gamma=0.5, lam=1.0)
    assert adv[0, 0].item() == 1.0


def test_lambda_one_no_dones_is_discounted_return_minus_value():
    T, N, gamma = 5, 3, 0.9
    rewards = torch.rand(T, N, dtype=torch.float64)
    values = torch.rand(T, N, dtype=torch.float64)
    last = torch.rand(N, dtype=torch.float64)
    flags = torch.zeros(T, N, dtype=torch.bool)
    adv, ret = compute_gae(rewards, values, flags, flags, torch.zeros(T, N, dtype=torch.float64), last, gamma, 1.0)
    g = last.clone()
    for t in reversed(range(T)):
        g = rewards[t] + gamma * g
        torch.testing.assert_close(ret[t], g)
