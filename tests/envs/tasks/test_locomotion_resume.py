"""quadruped-flat on the native backend: k iterations + k resumed from the checkpoint == 2k straight, bit for bit."""

from __future__ import annotations

import dataclasses

import torch

from configs.catalog import get_task
from configs.quadruped import FLAT_QUADRUPED
from envs.tasks.locomotion import LocomotionEnv
from rl_core import checkpoint as ckpt
from rl_core.runner import OnPolicyRunner


def small_config():
    cfg = get_task("quadruped-flat").default_config()
    return dataclasses.replace(
        cfg,
        env=dataclasses.replace(cfg.env, num_envs=16, backend="native"),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=4, device="cpu", save_interval=100),
        algorithm=dataclasses.replace(cfg.algorithm, num_learning_epochs=2, num_mini_batches=2),
    )


def runner():
    cfg = small_config()
    return OnPolicyRunner(LocomotionEnv(cfg.env, FLAT_QUADRUPED), cfg, task="quadruped-flat", quiet=True)


def test_k_plus_k_resumed_equals_2k_straight(tmp_path):
    straight = runner()
    straight.learn()

    first = runner()
    first.learn(num_iterations=2)
    path = first.save(tmp_path / "model_2.pt")
    resumed = runner()
    resumed.load_state_dict(ckpt.load(path))
    resumed.learn()

    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert torch.equal(straight.env.commands, resumed.env.commands)
    assert torch.equal(straight.env.physics.read().qpos, resumed.env.physics.read().qpos)
    assert straight.env_steps == resumed.env_steps == 4 * 16 * 8


def test_resume_without_env_state_would_differ(tmp_path):
    """The env state in the checkpoint matters: a fresh env instead of the saved one changes the run."""
    straight = runner()
    straight.learn()
    first = runner()
    first.learn(num_iterations=2)
    data = ckpt.load(first.save(tmp_path / "model_2.pt"))
    other = runner()
    other.env.reset(seed=999)
    other.load_state_dict({**data, "env": None} if "env" in data else data)
    other.learn()
    a, b = straight.policy.state_dict(), other.policy.state_dict()
    assert not all(torch.equal(a[k], b[k]) for k in a)
