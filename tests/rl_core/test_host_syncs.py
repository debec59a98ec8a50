"""No host syncs in the rollout or the update: every call that would copy a device value to Python is counted.

On a CPU tensor these calls are cheap, but on a GPU each one stalls the pipeline; counting them here keeps the
loops clean without a GPU (``tools/experiments/gpu_sync_check.py`` checks the same on CUDA with torch's sync debug
mode).
"""

from __future__ import annotations

import dataclasses

import torch
from torch.overrides import TorchFunctionMode

from rl_core.config import AlgorithmConfig, PolicyConfig, RunnerConfig, TrainConfig
from rl_core.runner import OnPolicyRunner
from tests.rl_core.test_runner import PointEnv

SYNCING = {"item", "cpu", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__", "nonzero", "any", "all"}
"""Tensor methods that return host values (or a data-dependent shape)."""


class CountSyncs(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in SYNCING and not (name in ("any", "all") and kwargs and "dim" in kwargs):
            self.calls.append(name)
        return func(*args, **(kwargs or {}))


def _runner(schedule: str) -> OnPolicyRunner:
    cfg = TrainConfig(
        env=dataclasses.replace(TrainConfig().env, num_envs=8),
        policy=PolicyConfig(actor_hidden_dims=(16,), critic_hidden_dims=(16,)),
        algorithm=AlgorithmConfig(num_learning_epochs=2, num_mini_batches=2, schedule=schedule, normalize_rewards=True),
        runner=RunnerConfig(num_steps_per_env=12, max_iterations=3))
    runner = OnPolicyRunner(PointEnv(8), cfg, task="point", quiet=True)
    runner.obs = runner.env.reset(seed=0)
    return runner


def test_collect_and_update_make_no_host_syncs():
    for schedule in ("adaptive", "linear"):
        runner = _runner(schedule)
        runner.collect()
        runner.alg.update()  # warm-up
        with CountSyncs() as counter:
            runner.collect()
            runner.alg.update()
        assert counter.calls == [], f"{schedule}: {counter.calls}"


def test_the_counter_sees_a_sync():
    with CountSyncs() as counter:
        x = torch.ones(3)
        x.sum().item()
        bool(x.any())
    assert counter.calls == ["item", "any", "__bool__"]
