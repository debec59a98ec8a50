"""One PPO update on a fixed batch, split over the ranks of a torchrun (or on all of it in one process).

    torchrun --nproc_per_node=2 tests/distributed_worker.py OUT_DIR      # each rank takes its share of the envs
    python tests/distributed_worker.py OUT_DIR                            # one process, the whole batch

Writes OUT_DIR/rank<r>.pt: the policy after the normalizer update and the PPO update. Used by
tests/apps/test_distributed.py to show that ranks stay identical and equal the single-process result. On Linux it
also writes OUT_DIR/rank<r>_threads.json: the names of the native threads left after ``distributed.shutdown()``
(gloo's threads must be gone, or the process may abort at exit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rl_core import distributed  # noqa: E402
from rl_core.config import AlgorithmConfig, PolicyConfig  # noqa: E402
from rl_core.env_api import ActionSpec  # noqa: E402
from rl_core.modules.actor_critic import ActorCritic  # noqa: E402
from rl_core.ppo import PPO  # noqa: E402
from tests.helpers import transition  # noqa: E402

T, N, OBS, ACT = 8, 16, 5, 2


def main(out: Path) -> None:
    if distributed.launched_by_torchrun():
        distributed.init_from_environment("cpu")
    rank, world = distributed.rank(), distributed.world_size()
    torch.manual_seed(0)
    policy = ActorCritic(OBS, None, ActionSpec(False, ACT),
                         PolicyConfig(actor_hidden_dims=(32,), critic_hidden_dims=(32,)))
    cfg = AlgorithmConfig(num_learning_epochs=3, num_mini_batches=1, schedule="adaptive", desired_kl=0.001)

    g = torch.Generator().manual_seed(1)  # the same full batch on every rank; each keeps its envs' columns
    obs = torch.randn(T, N, OBS, generator=g) * 3 + 1
    rewards = torch.randn(T, N, generator=g)
    terminated = torch.rand(T, N, generator=g) < 0.1
    last_obs = torch.randn(N, OBS, generator=g)
    all_actions = torch.randn(T, N, ACT, generator=g)
    cols = slice(rank * N // world, (rank + 1) * N // world)
    obs, rewards, terminated, last_obs = obs[:, cols], rewards[:, cols], terminated[:, cols], last_obs[cols]
    all_actions = all_actions[:, cols]
    n = N // world

    policy.update_normalizers(obs.reshape(-1, OBS), None)
    alg = PPO(policy, cfg, total_iterations=10, device=torch.device("cpu"), num_envs=n, steps_per_env=T,
              generator=torch.Generator().manual_seed(2))
    storage = alg.storage
    with torch.no_grad():
        for t in range(T):
            obs_n = policy.obs_normalizer(obs[t])
            params = policy.dist_params(obs_n)
            actions = all_actions[t]
            storage.add(transition(obs_n, None, actions, policy.head.log_prob(params, actions), params,
                                   policy.value(obs_n), rewards[t], terminated[t], torch.zeros(n, dtype=torch.bool)))
        storage.compute_returns(policy.value(policy.obs_normalizer(last_obs)), 0.99, 0.95)
    alg.update()
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"policy": policy.state_dict(), "lr": float(alg.lr)}, out / f"rank{rank}.pt")
    distributed.shutdown()
    tasks = Path("/proc/self/task")
    if tasks.is_dir():
        names = sorted((t / "comm").read_text().strip() for t in tasks.iterdir())
        (out / f"rank{rank}_threads.json").write_text(json.dumps(names))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
