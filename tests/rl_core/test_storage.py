"""RolloutStorage: every sample exactly once per epoch, fresh order per epoch, alignment of fields."""

import pytest
import torch

from rl_core.storage import RolloutStorage, gather
from tests.helpers import transition


def filled(T=6, N=5):
    s = RolloutStorage(T, N, torch.device("cpu"))
    for t in range(T):
        ids = torch.arange(N, dtype=torch.float32) + 100 * t  # unique id per (t, n)
        no = torch.zeros(N, dtype=torch.bool)
        s.add(transition(ids[:, None].expand(N, 3), None, ids[:, None].expand(N, 2), ids, ids[:, None].expand(N, 4),
                         ids, torch.zeros(N), no, no))
    s.compute_returns(torch.zeros(N), 0.99, 0.95)
    return s


def test_every_sample_once_per_epoch_in_fresh_order():
    s = filled()
    epochs, mbs = 3, 5
    seen, orders = [], []
    flat = s.flat()  # as PPO and distillation read it: the flat views gathered by each minibatch's indices
    for i, idx in enumerate(s.minibatch_indices(mbs, epochs, torch.Generator().manual_seed(0))):
        batch = gather(flat, idx)
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
        s.add(transition(torch.zeros(2, 3), None, torch.zeros(2, 2), torch.zeros(2), torch.zeros(2, 4), torch.zeros(2),
              torch.zeros(2), torch.zeros(2, dtype=torch.bool), torch.zeros(2, dtype=torch.bool), None))


def test_flat_views_and_gather_keep_critic_and_teacher_rows_aligned():
    T, N = 3, 4
    s = RolloutStorage(T, N, torch.device("cpu"))
    for t in range(T):
        ids = torch.arange(N, dtype=torch.float32) + 10 * t
        no = torch.zeros(N, dtype=torch.bool)
        s.add(transition(ids[:, None].expand(N, 2), -ids[:, None].expand(N, 3), ids[:, None], ids,
                         ids[:, None].expand(N, 2), ids, torch.zeros(N), no, no, teacher_actions=2 * ids[:, None]))
    flat = s.flat()
    assert flat["obs"].data_ptr() == s.obs.data_ptr()  # views, no copy
    batch = gather(flat, torch.tensor([5, 0, 11]))
    ids = batch["obs"][:, 0]
    assert ids.tolist() == [11.0, 0.0, 23.0]  # flat sample t * N + n
    assert torch.equal(batch["critic_obs"][:, 0], -ids) and torch.equal(batch["teacher_actions"][:, 0], 2 * ids)
