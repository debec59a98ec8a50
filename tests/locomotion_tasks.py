"""Every registered locomotion task, for the contract tests: the built-in ones and the example robot file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from configs.catalog import get_task, registered
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion_config import LocomotionEnvConfig

EXAMPLE_TASK = str(Path(__file__).resolve().parents[1] / "examples" / "my_robot" / "my_robot.py") + ":flat"
"""The robot of docs/robots.md, registered from its own file (absolute path)."""


def _locomotion_tasks() -> list[str]:
    # Distillation tasks (configs/distillation.py) reuse another task's env: its contract is tested there.
    builtin = [name for name, t in registered().items() if isinstance(t.default_config().env, LocomotionEnvConfig)
               and t.default_config().algorithm.name != "distillation"]
    return [n for n in builtin if ":" not in n] + [EXAMPLE_TASK]


LOCOMOTION_TASKS = _locomotion_tasks()
"""Task names: every registered locomotion task, then the example."""


def make_task_env(task: str, **env_fields) -> LocomotionEnv:
    """The task's env with its default config, some env fields replaced, on the CPU."""
    spec = get_task(task)
    cfg = dataclasses.replace(spec.default_config().env, **env_fields)
    env = spec.make_env(cfg, torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env
