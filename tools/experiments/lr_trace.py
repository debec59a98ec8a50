"""The learning rate and KL after every PPO minibatch of a short run: how the adaptive schedule moves within an
iteration (the logged ``Loss/learning_rate`` is only its value after the last minibatch).

    python -m tools.experiments.lr_trace --task Hopper-v5 --iterations 20 [section.field=value ...]

Prints, per iteration: the learning rate after the first, the smallest, the largest and the last minibatch, the
share of minibatches that ended at the floor (1e-5), and the KL (rollout policy vs current) of the first and last
minibatch.
"""

from __future__ import annotations

import argparse
import dataclasses

import torch

from rl_core.ppo import LR_MIN, PPO


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", required=True)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("overrides", nargs="*", metavar="section.field=value")
    args = p.parse_args()

    from configs.catalog import get_task
    from rl_core.config_io import apply_overrides, parse_override
    from rl_core.runner import OnPolicyRunner

    spec = get_task(args.task)
    cfg = apply_overrides(spec.default_config(), dict(parse_override(o) for o in args.overrides))
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, seed=args.seed, max_env_steps=None,
                                                              max_iterations=args.iterations))
    env = spec.make_env(cfg.env, torch.device(cfg.runner.device))
    runner = OnPolicyRunner(env, cfg, args.task, run_dir=None, quiet=True)
    alg = runner.alg
    if not isinstance(alg, PPO):
        raise SystemExit("error: lr_trace follows PPO's learning rate (algorithm.name=ppo)")
    trace: list[tuple[float, float]] = []
    step = alg._optimizer_step

    def traced(loss: torch.Tensor, metrics: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = step(loss, metrics)
        trace.append((float(alg.lr), float(metrics["kl"])))
        return out

    alg._optimizer_step = traced  # type: ignore[method-assign]
    a = cfg.algorithm
    print(f"{args.task}: {cfg.env.num_envs} envs x {cfg.runner.num_steps_per_env} steps, "
          f"{a.num_learning_epochs} epochs "
          f"x {a.num_mini_batches} minibatches, schedule {a.schedule}, desired_kl {a.desired_kl}")
    print("| iteration | lr first | lr min | lr max | lr last | minibatches at the floor | KL first | KL last |")
    print("|---|---|---|---|---|---|---|---|")
    for it in range(1, args.iterations + 1):
        trace.clear()
        runner.learn(1)
        lrs = [lr for lr, _ in trace]
        floor = sum(lr <= LR_MIN * 1.0001 for lr in lrs) / len(lrs)
        print(f"| {it} | {lrs[0]:.2e} | {min(lrs):.2e} | {max(lrs):.2e} | {lrs[-1]:.2e} | {floor:.0%} | "
              f"{trace[0][1]:.4f} | {trace[-1][1]:.4f} |", flush=True)
    env.close()


if __name__ == "__main__":
    main()
