"""SHA-256 of a seeded rollout of the quadruped with the default LocomotionEnvConfig: observations, rewards, done flags.

Run it on two checkouts to show that a change left the quadruped's rollouts bit-identical (native MuJoCo, one
thread, random actions; pushes and resets included):

    OMP_NUM_THREADS=1 PYTHONPATH=/path/to/checkout python tools/experiments/rollout_hash.py
    OMP_NUM_THREADS=1 PYTHONPATH=/path/to/checkout python tools/experiments/rollout_hash.py --robot humanoid

``--robot humanoid`` hashes the built-in humanoid with ``humanoid-flat``'s env (``configs/humanoid.HUMANOID_ENV``).
The script imports the project from PYTHONPATH, so this file can hash a checkout older than its ``--robot`` option.

``--task`` hashes another task's default env instead (e.g. ``quadruped-rough``: terrain, height scan,
curriculum and privileged critic), also native, one thread; ``--task all`` every registered MuJoCo task, one line
each (issue 26's check: every locomotion task bit-identical across the task's refactor).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
from typing import Any

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--robot", choices=("quadruped", "humanoid"), default="quadruped",
                        help="quadruped: quadruped-flat's env; humanoid: humanoid-flat's env")
    parser.add_argument("--task", default=None, help="a MuJoCo task's default env (default: quadruped, flat); "
                                                      "all: every registered MuJoCo task, one line each")
    args = parser.parse_args()
    if args.task == "all":
        from configs.catalog import registered

        for name, spec in registered().items():
            if hasattr(spec.default_config().env, "physics_threads"):  # a batched MuJoCo task
                print(digest_of(task_env(name, args.num_envs), name, args))
        return
    env = task_env(args.task, args.num_envs) if args.task is not None else robot_env(args.robot, args.num_envs)
    print(digest_of(env, args.task or args.robot, args))


def task_env(name: str, num_envs: int) -> Any:
    """A registered task's default env: native MuJoCo on one thread."""
    from configs.catalog import get_task

    spec = get_task(name)
    cfg = dataclasses.replace(spec.default_config().env, num_envs=num_envs, backend="native",  # type: ignore[call-arg]
                              physics_threads=1)
    return spec.make_env(cfg, torch.device("cpu"))


def robot_env(robot: str, num_envs: int) -> Any:
    """The built-in quadruped's or humanoid's flat env: native MuJoCo on one thread."""
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion.config import LocomotionEnvConfig

    if robot == "humanoid":
        from configs.humanoid import HUMANOID_ENV
        from envs.robots.humanoid import HUMANOID

        cfg = dataclasses.replace(HUMANOID_ENV, num_envs=num_envs, backend="native", physics_threads=1)
        return LocomotionEnv(cfg, HUMANOID)
    from envs.robots.quadruped import QUADRUPED

    return LocomotionEnv(LocomotionEnvConfig(num_envs=num_envs, backend="native", physics_threads=1), QUADRUPED)


def digest_of(env: Any, name: str, args: argparse.Namespace) -> str:
    """The SHA-256 line of a seeded rollout under random actions: observations, rewards, done flags."""
    digest = hashlib.sha256(env.reset(seed=args.seed)["policy"].numpy().tobytes())
    g = torch.Generator().manual_seed(0)
    for _ in range(args.steps):
        obs, rew, term, trunc, _ = env.step(torch.randn(args.num_envs, env.action_spec.n, generator=g))
        for x in (*obs.values(), rew, term, trunc):
            digest.update(x.numpy().tobytes())
    return f"{name} {args.num_envs} envs x {args.steps} steps, seed {args.seed}: {digest.hexdigest()}"


if __name__ == "__main__":
    main()
