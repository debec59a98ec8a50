"""Time the PPO update of the Atari CNN policy: rl_core vs a plain reference update in the same process.

Batch and math of CleanRL's ppo_atari.py (8 envs x 128 steps, 4 epochs x 4 minibatches, Nature CNN shared by
actor and critic, clipped value loss, grad-norm clip 0.5). rl_core keeps frames as uint8 and runs the
convolutions channels-last; the reference is the straightforward implementation: float32 frames in NCHW, one
forward for logits and value, Adam. Both are filled with the same random frames and timed the same way
(one warm-up, then alternating runs, medians). Throughput is reported in agent steps (samples) and in Atari
frames (samples x frame skip 4) learned per second of update.

    python -m bench.cnn_update [--num-envs 8] [--steps 128] [--repeats 3] [--device cpu|cuda] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from bench.timing import time_alternating
from configs.atari_tasks import atari_config
from rl_core.env_api import ActionSpec
from rl_core.modules.actor_critic import ActorCritic
from rl_core.ppo import PPO
from rl_core.storage import RolloutStorage

FRAME_SKIP = 4
SHAPE = (4, 84, 84)
ACTIONS = 4



def random_rollout(T: int, N: int, device: torch.device, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator(device="cpu").manual_seed(seed)
    return {
        "frames": torch.randint(0, 256, (T, N, *SHAPE), generator=g, dtype=torch.uint8).to(device),
        "actions": torch.randint(0, ACTIONS, (T, N), generator=g).to(device),
        "advantages": torch.randn(T, N, generator=g).to(device),
        "returns": torch.randn(T, N, generator=g).to(device),
    }


def setup_rl_core(T: int, N: int, device: torch.device, data: dict[str, torch.Tensor], compile: bool = False
                  ) -> Callable[[], None]:
    base = atari_config("BreakoutNoFrameskip-v4")
    cfg = dataclasses.replace(base.algorithm, compile=compile)
    policy = ActorCritic(SHAPE, None, ActionSpec(discrete=True, n=ACTIONS), base.policy).to(device)
    alg = PPO(policy, cfg, total_iterations=1000, device=device)
    head = policy.head
    storage = RolloutStorage(T, N, SHAPE, None, head.action_dim, head.param_dim, device, torch.uint8)
    with torch.no_grad():
        for t in range(T):
            params, values = policy.params_and_value(data["frames"][t], data["frames"][t])
            actions = data["actions"][t].unsqueeze(-1).float()
            storage.add(data["frames"][t], None, actions, head.log_prob(params, actions), params, values,
                        torch.zeros(N, device=device), torch.zeros(N, dtype=torch.bool, device=device),
                        torch.zeros(N, dtype=torch.bool, device=device), None)
    storage.advantages, storage.returns = data["advantages"].clone(), data["returns"].clone()
    gen = torch.Generator(device).manual_seed(0)
    return lambda: alg.update(storage, gen)


class ReferenceAgent(nn.Module):
    """The usual Atari PPO agent: NCHW float frames / 255 -> Nature CNN -> logits and value."""

    def __init__(self) -> None:
        super().__init__()
        self.network = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(), nn.Linear(64 * 7 * 7, 512), nn.ReLU())
        self.actor = nn.Linear(512, ACTIONS)
        self.critic = nn.Linear(512, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.network(x / 255.0)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)


def setup_reference(T: int, N: int, device: torch.device, data: dict[str, torch.Tensor]) -> Callable[[], None]:
    agent = ReferenceAgent().to(device)
    opt = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    B = T * N
    obs = data["frames"].reshape(B, *SHAPE).float()  # the reference stores float32 frames
    actions = data["actions"].reshape(B)
    adv_all, ret_all = data["advantages"].reshape(B), data["returns"].reshape(B)
    with torch.no_grad():
        logits, old_values = agent(obs)
        old_logp = torch.distributions.Categorical(logits=logits).log_prob(actions)
    gen = torch.Generator(device).manual_seed(0)
    clip = 0.1

    def run() -> None:
        for _ in range(4):
            perm = torch.randperm(B, generator=gen, device=device)
            for idx in perm.split(B // 4):
                logits, values = agent(obs[idx])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = (dist.log_prob(actions[idx]) - old_logp[idx]).exp()
                adv = adv_all[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                v_clipped = old_values[idx] + (values - old_values[idx]).clamp(-clip, clip)
                v = 0.5 * torch.max((values - ret_all[idx]) ** 2, (v_clipped - ret_all[idx]) ** 2).mean()
                loss = pg - 0.01 * dist.entropy().mean() + 0.5 * v
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()

    return run


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--steps", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch default)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--compile", action="store_true", help="also time rl_core with algorithm.compile=true")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    if args.repeats < 1 or (args.num_envs * args.steps) % 4:
        p.error("--repeats must be >= 1 and num_envs * steps divisible by 4")
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    T, N = args.steps, args.num_envs
    data = random_rollout(T, N, device, 0)
    runs = {"rl_core": setup_rl_core(T, N, device, data), "reference": setup_reference(T, N, device, data)}
    if args.compile:
        runs["rl_core+compile"] = setup_rl_core(T, N, device, data, compile=True)
    times = time_alternating(runs, args.repeats, device)
    samples = T * N
    results = {name: {"median_s": statistics.median(ts), "times_s": ts,
                      "samples_per_s": samples / statistics.median(ts),
                      "frames_per_s": samples * FRAME_SKIP / statistics.median(ts)} for name, ts in times.items()}
    ratios = {name: results["reference"]["median_s"] / r["median_s"]
              for name, r in results.items() if name != "reference"}
    storage_mib = {"uint8": samples * 4 * 84 * 84 / 2**20, "float32": samples * 4 * 84 * 84 * 4 / 2**20}
    print(f"Atari CNN PPO update: {N} envs x {T} steps, 4 epochs x 4 minibatches, device {device}, "
          f"threads {torch.get_num_threads()}, {args.repeats} timed runs each")
    print(f"{'update':<18}{'median s':>10}{'samples/s':>12}{'frames/s':>12}")
    for name, r in results.items():
        print(f"{name:<18}{r['median_s']:>10.3f}{r['samples_per_s']:>12,.0f}{r['frames_per_s']:>12,.0f}")
    for name, x in ratios.items():
        print(f"ratio reference/{name} = {x:.2f}x")
    print(f"rollout frames in storage: {storage_mib['uint8']:.0f} MiB as uint8 (rl_core), "
          f"{storage_mib['float32']:.0f} MiB as float32 (reference)")
    if args.json is not None:
        args.json.write_text(json.dumps({"config": {"num_envs": N, "steps": T, "device": str(device),
                                                    "threads": torch.get_num_threads(), "repeats": args.repeats},
                                         "results": results, "ratios": ratios, "storage_mib": storage_mib},
                                        indent=2) + "\n")


if __name__ == "__main__":
    main()
