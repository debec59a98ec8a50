"""Per-task configs. Importing this package registers the built-in tasks."""

from configs import gym_tasks, quadruped  # noqa: F401
