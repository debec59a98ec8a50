"""Running normalizer against numpy over many uneven batches; the reward (return) normalizer."""

import numpy as np
import torch

from rl_core.modules.normalizer import ReturnNormalizer, RunningNormalizer


def test_running_stats_match_numpy():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 5.0, size=(int(rng.integers(1, 300)), 4)) * np.array([1, 10, 0.1, 1]) for _ in range(25)]
    norm = RunningNormalizer(4, clip=1e9)
    for b in batches:
        norm.update(torch.as_tensor(b, dtype=torch.float32))
    data = np.concatenate(batches).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(norm.mean.numpy(), data.mean(0), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(norm.var.numpy(), data.var(0), rtol=1e-9)
    assert norm.count.item() == len(data)
    x = torch.as_tensor(data[:7], dtype=torch.float32)
    expected = (data[:7] - data.mean(0)) / np.sqrt(data.var(0) + 1e-8)
    np.testing.assert_allclose(norm(x).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_normalizer_clips_and_is_frozen_without_update():
    norm = RunningNormalizer(2, clip=5.0)
    norm.update(torch.randn(100, 2))
    state = {k: v.clone() for k, v in norm.state_dict().items()}
    out = norm(torch.tensor([[1e6, -1e6]]))
    assert out.tolist() == [[5.0, -5.0]]
    for k, v in norm.state_dict().items():
        assert torch.equal(v, state[k])


def test_return_normalizer_scales_by_return_std_and_resets_on_done():
    rn = ReturnNormalizer(num_envs=2, gamma=0.9, device="cpu")
    done = torch.tensor([False, True])
    out = rn(torch.tensor([2.0, 2.0]), done)
    assert rn.returns.tolist() == [2.0, 0.0]
    std = torch.sqrt(rn.stats.var + 1e-8).float()
    torch.testing.assert_close(out, torch.tensor([2.0, 2.0]) / std)
