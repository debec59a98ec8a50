"""RolloutStorage: every sample exactly once per epoch, fresh order per epoch, alignment of fields."""

import pytest
import torch

from rl_core.storage import RolloutStorage


def filled(T=6, N=5):
    s = RolloutStorage(T, N, obs_shape=3, critic_obs_shape=None, action_dim=2, param_dim=4, device=torch.device("cpu"))
    for t in range(T):
        ids = torch.arange(N, dtype=torch.float32) + 100 * t  # unique id per (t, n)
        s.add(ids[:, None].expand(N, 3), None, ids[:, None].expand(N, 2), ids, ids[:, None].expand(N, 4), ids,
              torch.zeros(N), torch.zeros(N, dtype=torch.bool), torch.zeros(N, dtype=torch.bool), None)
    s.compute_returns(torch.zeros(N), 0.99, 0.95)
    return s


def test_every_sample_once_per_epoch_in_fresh_order():
    s = filled()
    epochs, mbs = 3, 5
    seen, orders = [], []
    for i, batch in enumerate(s.minibatches(mbs, epochs, torch.Generator().manual_seed(0))):
        # All fields of one row belong to the same (t, n).
        assert torch.equal(batch["obs"][:, 0], batch["actions"][:, 0])
        assert torch.equal(batch["obs"][:, 0], batch["log_probs"])
        assert torch.equal(batch["obs"][:, 0], batch["values"])
        assert torch.equal(batch["critic_obs"], batch["obs"])
        assert batch["obs"].shape[0] == 6 * 5 // mbs
        seen.append(batch["log_probs"])
        if (i + 1) % mbs == 0:
            order = torch.cat(seen)
            assert sorted(order.tolist()) == sorted(s.log_probs.flatten().tolist())
            orders.append(order)
            seen = []
    assert len(orders) == epochs
    assert not torch.equal(orders[0], orders[1])


def test_add_beyond_capacity_raises():
    s = filled(T=2, N=2)
    with pytest.raises(RuntimeError):
        s.add(torch.zeros(2, 3), None, torch.zeros(2, 2), torch.zeros(2), torch.zeros(2, 4), torch.zeros(2),
              torch.zeros(2), torch.zeros(2, dtype=torch.bool), torch.zeros(2, dtype=torch.bool), None)
