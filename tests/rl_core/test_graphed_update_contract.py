"""The CUDA-graphed PPO minibatch update (rl_core/graphed_update.py), run on the CPU with a stand-in for the captured
graph (tests/graph_standin.py): three updates replayed from the graph leave the same parameters, learning rate and
metrics as the eager updates, bit for bit, with and without symmetry augmentation (whose mirrored samples are made
once per update). tests/rl_core/test_cuda_graphs.py runs the real graph on a GPU."""

from __future__ import annotations

import pytest
import torch

from rl_core.config import AlgorithmConfig, PolicyConfig
from rl_core.env_api import ActionSpec
from rl_core.graphed_update import GraphedMinibatch
from rl_core.modules.actor_critic import ActorCritic
from rl_core.ppo import PPO
from rl_core.storage import RolloutStorage
from rl_core.symmetry import Mirrors
from tests import graph_standin
from tests.helpers import transition

T, N, OBS, ACT = 8, 32, 10, 4


def _mirror(width: int) -> object:
    sign = torch.tensor([(-1.0) ** i for i in range(width)])
    return lambda x: torch.flip(x, [-1]) * sign


def build(graphed: bool, symmetry: bool) -> tuple[ActorCritic, PPO]:
    torch.manual_seed(0)
    config = PolicyConfig(actor_hidden_dims=(32, 16), critic_hidden_dims=(32, 16), activation="elu")
    policy = ActorCritic((OBS,), None, ActionSpec(discrete=False, n=ACT), config)
    mirrors = Mirrors(_mirror(OBS), _mirror(ACT)) if symmetry else None  # type: ignore[arg-type]
    cfg = AlgorithmConfig(num_mini_batches=4, num_learning_epochs=2, symmetry="augment" if symmetry else "none")
    alg = PPO(policy, cfg, 10, torch.device("cpu"), N, T, torch.Generator(), mirrors=mirrors)
    if graphed:  # what PPO builds on a GPU
        alg._graphed = GraphedMinibatch(alg._minibatch, torch.device("cpu"))
    return policy, alg


def fill(storage: RolloutStorage, policy: ActorCritic, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    storage.clear()
    for _ in range(T):
        raw = 1.0 + 2.0 * torch.randn(N, OBS, generator=gen)
        with torch.no_grad():
            policy.update_normalizers(raw, None)  # statistics move between updates (the mirror reads them)
            obs = policy.obs_normalizer(raw)
            params, values = policy.params_and_value(obs, obs)
            actions = policy.head.sample(params, gen)
            no = torch.zeros(N, dtype=torch.bool)
            storage.add(transition(obs, None, actions, policy.head.log_prob(params, actions), params, values,
                                   torch.randn(N, generator=gen), no, no))
    storage.compute_returns(torch.zeros(N), 0.99, 0.95)


@pytest.mark.parametrize("symmetry", [False, True], ids=["plain", "symmetry"])
def test_the_graphed_update_replays_the_eager_update(symmetry: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    graph_standin.install(monkeypatch)
    (pa, graphed), (pb, eager) = build(True, symmetry), build(False, symmetry)
    for it in range(3):  # 1: eager warm-up, 2: capture and replays, 3: replays
        fill(graphed.storage, pa, 100 + it)
        fill(eager.storage, pb, 100 + it)
        graphed.generator.manual_seed(it)
        eager.generator.manual_seed(it)
        out_a, out_b = graphed.update(), eager.update()
        for k in ("surrogate_loss", "value_loss", "kl", "learning_rate", "grad_norm"):
            assert torch.equal(out_a[k], out_b[k]), (it, k)
        for x, y in zip(pa.parameters(), pb.parameters(), strict=True):
            assert torch.equal(x, y), it
    assert graphed.graphed_update is not None and graphed.graphed_update.graph is not None
    replays = graphed.graphed_update.graph.replays  # type: ignore[attr-defined]  # the stand-in counts them
    assert replays == 2 * 2 * 4  # iterations 2 and 3, every minibatch of every epoch
