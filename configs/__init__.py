"""Per-task configs. Importing this package registers the built-in tasks."""

from configs import atari_tasks, distillation, gym_tasks, humanoid, quadruped, reach  # noqa: F401
