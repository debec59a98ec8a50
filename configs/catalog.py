"""Task catalog: a task name -> its TaskSpec, built-in tasks included (importing ``configs`` registers them).

The one place that knows every task; ``envs/registry.py`` holds the TaskSpec type and the registration, and
imports nothing from ``configs``, so the env side never depends back on the per-task configs.
"""

from __future__ import annotations

import difflib

import configs  # noqa: F401  (registers the built-in tasks)
from configs.atari_tasks import atari_task
from configs.gym_tasks import generic_gym_task
from contract.errors import UserError
from envs.registry import TaskSpec, is_file_task, load_file_task, registered_so_far
from envs.robots.menagerie import is_menagerie


def registered() -> dict[str, TaskSpec]:
    """Every registered task: the built-in ones (imported above) and user files loaded so far."""
    return registered_so_far()


def get_task(name: str) -> TaskSpec:
    """The registered task, else a Gymnasium id with generic defaults; unknown names get suggestions."""
    tasks = registered()
    if name in tasks:
        return tasks[name]
    if is_file_task(name):
        if name.endswith(":track"):
            from configs.track import file_track_task

            return file_track_task(name)
        if name.endswith(":deploy"):
            from configs.drafted import file_deploy_task

            return file_deploy_task(name)
        return load_file_task(name)
    if is_menagerie(name):
        from configs.menagerie import menagerie_task

        return menagerie_task(name)
    import gymnasium as gym

    from envs.atari_wrappers import is_atari_id

    if is_atari_id(name):
        return atari_task(name)
    if name in gym.registry:
        return generic_gym_task(name)
    candidates = list(tasks) + list(gym.registry)
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    hint = (f"; did you mean {', '.join(close)}?" if close
            else f"; registered tasks: {', '.join(sorted(tasks))} or any Gymnasium id")
    raise UserError(f"unknown task '{name}'{hint}")
