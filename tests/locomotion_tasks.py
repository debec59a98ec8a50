"""Every registered locomotion task, for the contract tests: the built-in ones and the example robot files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from configs.catalog import get_task, registered
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_TASK = str(EXAMPLES / "my_robot" / "my_robot.py") + ":flat"
"""The robot of docs/robots.md, registered from its own file (absolute path)."""
MENAGERIE_STYLE = tuple(str(EXAMPLES / name / f"{name}.py") + ":flat" for name in ("anymal_like", "go_like", "h1_like"))
"""The Menagerie-style examples (file actuators and multi-geom feet; a Unitree-style file with damping and soft feet;
a humanoid with held and welded joints and capsule feet)."""


def _locomotion_tasks() -> list[str]:
    # Distillation tasks (configs/distillation.py) reuse another task's env: its contract is tested there.
    builtin = [name for name, t in registered().items() if isinstance(t.default_config().env, LocomotionEnvConfig)
               and t.default_config().algorithm.name != "distillation"]
    return [n for n in builtin if ":" not in n] + [EXAMPLE_TASK, *MENAGERIE_STYLE]


LOCOMOTION_TASKS = _locomotion_tasks()
"""Task names: every registered locomotion task, then the examples."""


def make_task_env(task: str, **env_fields) -> LocomotionEnv:
    """The task's env with its default config, some env fields replaced, on the CPU."""
    spec = get_task(task)
    cfg = dataclasses.replace(spec.default_config().env, **env_fields)
    env = spec.make_env(cfg, torch.device("cpu"))
    assert isinstance(env, LocomotionEnv)
    return env
