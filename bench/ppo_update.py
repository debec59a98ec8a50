"""Time one PPO update (all epochs x minibatches: forward, backward, optimizer step) of rl_core and of rsl_rl.

Both libraries get the same batch shape, networks and hyperparameters in one process; each storage is filled
with random observations, actions sampled from its policy, random rewards and some done flags, then its own
return computation runs and only ``update`` is timed. Runs interleave the two libraries (after one warm-up
each) and report medians, the achieved FLOP/s against this machine's fp32 matmul peak, and the ratio.

    python -m bench.ppo_update [--hidden 512,256,128] [--repeats 3] [--num-envs 4096] [--steps 24] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import torch

from bench.timing import sync, time_alternating
from rl_core.config import AlgorithmConfig, PolicyConfig
from rl_core.env_api import ActionSpec
from rl_core.modules.actor_critic import ActorCritic
from rl_core.ppo import PPO
from rl_core.storage import RolloutStorage

RSL_RL_VERSION = "5.5.1"
INSTALL_HINT = "pip install -e '.[bench]'"

# Shared hyperparameters (rl_core / rsl_rl use the same names for these).
HP: dict[str, float | int | bool | str] = dict(
    num_learning_epochs=5, num_mini_batches=4, clip_param=0.2, gamma=0.99, lam=0.95, value_loss_coef=1.0,
    entropy_coef=0.01, learning_rate=1e-3, schedule="adaptive", desired_kl=0.01, max_grad_norm=1.0,
    use_clipped_value_loss=True,
)
DONE_P, TRUNC_P = 0.02, 0.005  # per-step probability of a termination / a time-out in the random rollout



def matmul_peak_gflops(device: torch.device, n: int = 2048, reps: int = 10) -> float:
    """Best-of-``reps`` fp32 ``n x n @ n x n`` throughput in GFLOP/s."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(reps):
        sync(device)
        t0 = time.perf_counter()
        a @ b
        sync(device)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best / 1e9


def update_flops(obs_dim: int, act_dim: int, hidden: list[int], batch: int, epochs: int, minibatches: int) -> float:
    """3 (forward + 2x backward) x 2 (multiply-add) x sum(in*out) of actor and critic, per sample."""
    def macs(out_dim: int) -> int:
        dims = [obs_dim, *hidden, out_dim]
        return sum(a * b for a, b in pairwise(dims))

    return 3 * 2 * (macs(act_dim) + macs(1)) * (batch // minibatches) * minibatches * epochs


def random_step(N: int, device: torch.device, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Rewards, terminated, truncated of one random env step."""
    u = torch.rand(N, device=device, generator=gen)
    return torch.randn(N, device=device, generator=gen), u < DONE_P, (u >= DONE_P) & (u < DONE_P + TRUNC_P)


# ------------------------------------------------------------------------------------------------- rl_core
def setup_rl_core(T: int, N: int, obs_dim: int, act_dim: int, hidden: list[int], device: torch.device,
                  seed: int, compile: bool = False) -> Callable[[], None]:
    pcfg = PolicyConfig(actor_hidden_dims=tuple(hidden), critic_hidden_dims=tuple(hidden), activation="elu")
    cfg = AlgorithmConfig(**HP, compile=compile)  # type: ignore[arg-type]
    policy = ActorCritic(obs_dim, None, ActionSpec(discrete=False, n=act_dim), pcfg).to(device)
    alg = PPO(policy, cfg, total_iterations=1, device=device)
    head = policy.head
    storage = RolloutStorage(T, N, obs_dim, None, head.action_dim, head.param_dim, device)
    gen = torch.Generator(device).manual_seed(seed)
    with torch.inference_mode():
        for _ in range(T):
            obs = torch.randn(N, obs_dim, device=device, generator=gen)  # stands for already-normalized obs
            params = policy.dist_params(obs)
            actions = head.sample(params, gen)
            values = policy.value(obs)
            rewards, terminated, truncated = random_step(N, device, gen)
            storage.add(obs, None, actions, head.log_prob(params, actions), params, values, rewards, terminated,
                        truncated, values)  # final_values: any value, used only where truncated
        storage.compute_returns(policy.value(torch.randn(N, obs_dim, device=device, generator=gen)),
                                cfg.gamma, cfg.lam)
    advantages = storage.advantages.clone()
    shuffle = torch.Generator(device).manual_seed(seed + 1)

    def run() -> None:
        storage.advantages = advantages.clone()  # update() normalizes the rollout's advantages in place
        alg.update(storage, shuffle)

    return run


# --------------------------------------------------------------------------------------------------- floor
def setup_floor(T: int, N: int, obs_dim: int, act_dim: int, hidden: list[int], device: torch.device,
                seed: int) -> Callable[[], None]:
    """The networks alone: forward + backward of the same actor and critic MLPs on every minibatch of an update
    (compiled), with no loss terms, sampling, gradient clipping or optimizer. No update of these networks can
    take less; rsl_rl's time over this one bounds the speedup any PPO implementation can reach here."""
    pcfg = PolicyConfig(actor_hidden_dims=tuple(hidden), critic_hidden_dims=tuple(hidden), activation="elu")
    policy = ActorCritic(obs_dim, None, ActionSpec(discrete=False, n=act_dim), pcfg).to(device)
    gen = torch.Generator(device).manual_seed(seed)
    batches = int(HP["num_learning_epochs"]) * int(HP["num_mini_batches"])
    minibatch = torch.randn(T * N // int(HP["num_mini_batches"]), obs_dim, device=device, generator=gen)

    @torch.compile
    def forward_backward(x: torch.Tensor) -> None:
        (policy.actor(x).square().sum() + policy.critic(x).square().sum()).backward()

    def run() -> None:
        for _ in range(batches):
            forward_backward(minibatch)

    return run


# -------------------------------------------------------------------------------------------------- rsl_rl
def setup_rsl_rl(T: int, N: int, obs_dim: int, act_dim: int, hidden: list[int], device: torch.device,
                 seed: int) -> Callable[[], None]:
    from rsl_rl.algorithms import PPO as RslPPO
    from rsl_rl.models import MLPModel
    from rsl_rl.storage import RolloutStorage as RslStorage
    from tensordict import TensorDict

    gen = torch.Generator(device).manual_seed(seed)

    def observe() -> TensorDict:
        return TensorDict({"policy": torch.randn(N, obs_dim, device=device, generator=gen)}, batch_size=[N])

    obs = observe()
    groups = {"actor": ["policy"], "critic": ["policy"]}
    actor = MLPModel(obs, groups, "actor", act_dim, hidden_dims=hidden, activation="elu",
                     distribution_cfg={"class_name": "GaussianDistribution", "init_std": 1.0})
    critic = MLPModel(obs, groups, "critic", 1, hidden_dims=hidden, activation="elu")
    storage = RslStorage("rl", N, T, obs, [act_dim], str(device))
    alg = RslPPO(actor, critic, storage, device=str(device), **HP)  # type: ignore[arg-type]
    alg.train_mode()
    with torch.inference_mode():  # as rsl_rl's OnPolicyRunner collects
        for _ in range(T):
            alg.act(obs)
            obs = observe()
            rewards, terminated, truncated = random_step(N, device, gen)
            alg.process_env_step(obs, rewards, terminated | truncated, {"time_outs": truncated})
        alg.compute_returns(obs)  # also normalizes the advantages (rsl_rl's default)

    def run() -> None:
        storage.step = T  # update() ends with storage.clear(); its tensors are kept, so the data stays
        alg.update()

    return run


# ---------------------------------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hidden", default="512,256,128", help="hidden sizes of actor and critic, e.g. 128,64,32")
    p.add_argument("--repeats", type=int, default=3, help="timed updates per library (median reported)")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=24, help="steps per env in the rollout")
    p.add_argument("--obs-dim", type=int, default=48)
    p.add_argument("--actions", type=int, default=12)
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch default)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    p.add_argument("--compile", action="store_true",
                   help="also time rl_core with algorithm.compile=true (torch.compile)")
    p.add_argument("--floor", action="store_true", help="also time the networks' forward + backward alone (compiled)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        from importlib.metadata import version

        import rsl_rl  # noqa: F401
        found = version("rsl-rl-lib")
    except ImportError:
        sys.exit(f"error: rsl_rl is not installed (benchmark-only dependency); run: {INSTALL_HINT}")
    if found != RSL_RL_VERSION:
        sys.exit(f"error: rsl-rl-lib {found} is installed, this benchmark needs {RSL_RL_VERSION}; run: {INSTALL_HINT}")
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    hidden = [int(h) for h in args.hidden.split(",")]
    T, N = args.steps, args.num_envs
    if (T * N) % int(HP["num_mini_batches"]):
        sys.exit(f"error: num_envs * steps = {T * N} is not divisible by {HP['num_mini_batches']} minibatches")

    runs = {
        "rl_core": setup_rl_core(T, N, args.obs_dim, args.actions, hidden, device, args.seed),
        "rsl_rl": setup_rsl_rl(T, N, args.obs_dim, args.actions, hidden, device, args.seed),
    }
    if args.compile:
        runs["rl_core+compile"] = setup_rl_core(T, N, args.obs_dim, args.actions, hidden, device, args.seed,
                                                compile=True)
    if args.floor:
        runs["networks only"] = setup_floor(T, N, args.obs_dim, args.actions, hidden, device, args.seed)
    peak = matmul_peak_gflops(device)
    times = time_alternating(runs, args.repeats, device)
    peak = max(peak, matmul_peak_gflops(device))  # measured before and after: the best seen is the peak

    flops = update_flops(args.obs_dim, args.actions, hidden, T * N, int(HP["num_learning_epochs"]),
                         int(HP["num_mini_batches"]))
    results = {}
    for name, ts in times.items():
        med = statistics.median(ts)
        results[name] = {"median_s": med, "times_s": ts, "gflops": flops / med / 1e9,
                         "pct_of_peak": 100.0 * flops / med / 1e9 / peak}
    ratio = results["rsl_rl"]["median_s"] / results["rl_core"]["median_s"]
    ratios = {name: results["rsl_rl"]["median_s"] / r["median_s"] for name, r in results.items() if name != "rsl_rl"}

    print(f"PPO update: {N} envs x {T} steps, {HP['num_learning_epochs']} epochs x "
          f"{HP['num_mini_batches']} minibatches, "
          f"obs {args.obs_dim}, actions {args.actions}, hidden {hidden}, device {device}, "
          f"threads {torch.get_num_threads()}, {args.repeats} timed runs each")
    print(f"model FLOPs per update {flops / 1e9:.1f} GFLOP; fp32 matmul peak {peak:.1f} GFLOP/s")
    print(f"{'library':<16}{'median s':>10}{'GFLOP/s':>10}{'% peak':>9}")
    for name, r in results.items():
        print(f"{name:<16}{r['median_s']:>10.3f}{r['gflops']:>10.1f}{r['pct_of_peak']:>8.1f}%")
    for name, x in ratios.items():
        print(f"ratio rsl_rl/{name} = {x:.2f}x")

    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "config": {"num_envs": N, "steps": T, "obs_dim": args.obs_dim, "actions": args.actions, "hidden": hidden,
                       "device": str(device), "threads": torch.get_num_threads(), "repeats": args.repeats, **HP},
            "torch": torch.__version__, "rsl_rl": found, "update_gflop": flops / 1e9, "peak_gflops": peak,
            "results": results, "ratio_rsl_rl_over_rl_core": ratio, "ratios": ratios,
        }, indent=2) + "\n")


if __name__ == "__main__":
    main()
