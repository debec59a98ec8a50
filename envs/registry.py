"""Task registry: task name -> env factory and default config. Any Gymnasium id works without registering."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from rl_core.config import EnvConfig, TrainConfig
from rl_core.env_api import VecEnv
from rl_core.errors import UserError


@dataclass(frozen=True)
class TaskSpec:
    """A trainable task: how to build its env and its default (tuned) config."""

    name: str
    """Name used on the command line (``--task``)."""
    make_env: Callable[[EnvConfig, torch.device], VecEnv]
    """Builds the batched env from the env section of the config on the given device."""
    default_config: Callable[[], TrainConfig]
    """Returns the task's default config (a fresh instance)."""
    description: str = ""
    """One line for ``train.py --list-tasks``."""
    check_dependencies: Callable[[], None] | None = None
    """Raises a one-line UserError when a package the task needs is missing (train.py calls it before it writes
    anything)."""


_REGISTRY: dict[str, TaskSpec] = {}


def register(spec: TaskSpec) -> TaskSpec:
    """Add a task; a second task of the same name is an error."""
    if spec.name in _REGISTRY:
        raise ValueError(f"task '{spec.name}' is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> dict[str, TaskSpec]:
    import configs  # noqa: F401  (registers the built-in tasks)

    return dict(_REGISTRY)


def get_task(name: str) -> TaskSpec:
    """The registered task, else a Gymnasium id with generic defaults; unknown names get suggestions."""
    tasks = registered()
    if name in tasks:
        return tasks[name]
    import gymnasium as gym

    from envs.atari_wrappers import is_atari_id

    if is_atari_id(name):
        from configs.atari_tasks import atari_task

        return atari_task(name)
    if name in gym.registry:
        from configs.gym_tasks import generic_gym_task

        return generic_gym_task(name)
    candidates = list(tasks) + list(gym.registry)
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; registered tasks: {', '.join(sorted(tasks))} or any Gymnasium id"
    raise UserError(f"unknown task '{name}'{hint}")
