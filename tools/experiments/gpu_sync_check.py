"""Count host syncs in the rollout and in the PPO update on a CUDA device (torch's sync debug mode).

    python -m tools.experiments.gpu_sync_check [--task quadruped-flat] [--num-envs 512] [--iterations 2]

One warm-up iteration (compilation, allocator), then ``--iterations`` iterations with
``torch.cuda.set_sync_debug_mode("warn")``: every synchronizing call in ``collect()`` and ``update()`` is
caught and printed with the line that made it. The runner's one reduction per iteration (``_reduce``) is
outside the measured calls on purpose.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="quadruped-flat")
    p.add_argument("--num-envs", type=int, default=512)
    p.add_argument("--iterations", type=int, default=2)
    args = p.parse_args()

    import torch

    from configs.catalog import get_task
    from rl_core.runner import OnPolicyRunner

    if not torch.cuda.is_available():
        print("error: needs a CUDA device", file=sys.stderr)
        return 2
    spec = get_task(args.task)
    cfg = spec.default_config()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=args.num_envs),
                              runner=dataclasses.replace(cfg.runner, device="cuda"))
    env = spec.make_env(cfg.env, torch.device("cuda"))
    runner = OnPolicyRunner(env, cfg, task=args.task, quiet=True)
    runner.start()
    runner.collect()
    runner.alg.update()  # warm-up
    torch.cuda.synchronize()

    counts: dict[str, collections.Counter] = {"collect": collections.Counter(), "update": collections.Counter()}
    for _ in range(args.iterations):
        for phase, fn in (("collect", runner.collect),
                          ("update", lambda: runner.alg.update())):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                torch.cuda.set_sync_debug_mode("warn")
                try:
                    fn()
                finally:
                    torch.cuda.set_sync_debug_mode("default")
            for w in caught:
                if "synchroniz" not in str(w.message):
                    continue
                origin = Path(w.filename).relative_to(ROOT) if str(ROOT) in w.filename else w.filename
                counts[phase][f"{origin}:{w.lineno}"] += 1
        torch.cuda.synchronize()
    steps = args.iterations * cfg.runner.num_steps_per_env
    for phase, c in counts.items():
        total = sum(c.values())
        print(f"{phase}: {total} host syncs in {args.iterations} iterations ({steps} env steps)"
              + "".join(f"\n  {n:5d}  {where}" for where, n in c.most_common()))
    env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
