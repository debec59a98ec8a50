"""``TaskDefaults``: the learner defaults a robot file gives its task (``flat_task(..., defaults=...)``).

    flat = flat_task("my-biped-flat", MY_BIPED, MY_ENV,
                     defaults=TaskDefaults(init_noise_std=0.5, symmetry="augment", max_iterations=1000))

Each field left None keeps the task's default (``configs/locomotion.py``: flat, rough or blind); a field set here
replaces it in ``default_config()``, and the command line (``policy.init_noise_std=0.8``) still wins over both.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, Optional

from envs.robots.spec import RobotSpec
from rl_core.config import TrainConfig


@dataclass(frozen=True)
class TaskDefaults:
    """Learner settings a robot needs (None: the task's default)."""

    init_noise_std: Optional[float] = None
    """``policy.init_noise_std``: initial action noise std (a tall biped falls within a second with 1.0: 0.5)."""
    actor_hidden_dims: Optional[tuple[int, ...]] = None
    """``policy.actor_hidden_dims``: widths of the actor's hidden layers."""
    critic_hidden_dims: Optional[tuple[int, ...]] = None
    """``policy.critic_hidden_dims``: widths of the critic's hidden layers."""
    symmetry: Optional[Literal["none", "augment"]] = None
    """``algorithm.symmetry``: ``augment`` doubles each minibatch with its left-right mirror (the env must offer
    one: twin joints by name, ``envs/robots/sides.py``)."""
    entropy_coef: Optional[float] = None
    """``algorithm.entropy_coef``: weight of the entropy bonus."""
    learning_rate: Optional[float] = None
    """``algorithm.learning_rate``: initial learning rate (adaptive schedule)."""
    max_iterations: Optional[int] = None
    """``runner.max_iterations`` on any machine (None: the task's, which differs between GPU and CPU)."""
    decimation: Optional[int] = None
    """``env.decimation``: physics steps per control step (None: the robot's ``sim.substeps``, else the task's)."""
    cpu_num_envs: Optional[int] = None
    """``env.num_envs`` on a machine without a GPU (None: the task's, 1024); a GPU keeps the task's (4096)."""

    def __post_init__(self) -> None:
        for name in ("actor_hidden_dims", "critic_hidden_dims"):
            value = getattr(self, name)
            if value is not None:
                dims = (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)
                object.__setattr__(self, name, dims)


POLICY_FIELDS = ("init_noise_std", "actor_hidden_dims", "critic_hidden_dims")
ALGORITHM_FIELDS = ("symmetry", "entropy_coef", "learning_rate")
RUNNER_FIELDS = ("max_iterations",)
ENV_FIELDS = ("decimation",)
CPU_ENV_FIELDS = {"cpu_num_envs": "num_envs"}
"""``TaskDefaults`` fields that apply only where the config's ``runner.device`` is the CPU, by the env field each
sets."""


def robot_defaults(robot: RobotSpec, defaults: Optional[TaskDefaults]) -> Optional[TaskDefaults]:
    """``defaults`` with ``decimation`` from the robot's ``sim.substeps`` (a spec that changes its physics step
    keeps the task's control rate: ``check_robot --fix``'s 0.01 s step runs 2 substeps), unless ``defaults`` sets
    its own."""
    if robot.sim.substeps is None or (defaults is not None and defaults.decimation is not None):
        return defaults
    return dataclasses.replace(defaults or TaskDefaults(), decimation=robot.sim.substeps)


def apply_defaults(cfg: TrainConfig, defaults: Optional[TaskDefaults]) -> TrainConfig:
    """``cfg`` with the fields ``defaults`` sets (None: ``cfg`` unchanged)."""
    if defaults is None:
        return cfg

    def section(obj, names: tuple[str, ...]):
        changes = {n: getattr(defaults, n) for n in names if getattr(defaults, n) is not None}
        return dataclasses.replace(obj, **changes) if changes else obj

    env = section(cfg.env, ENV_FIELDS)
    if cfg.runner.device == "cpu":
        cpu = {field: getattr(defaults, name) for name, field in CPU_ENV_FIELDS.items()
               if getattr(defaults, name) is not None}
        env = dataclasses.replace(env, **cpu) if cpu else env
    return dataclasses.replace(cfg, env=env, policy=section(cfg.policy, POLICY_FIELDS),
                               algorithm=section(cfg.algorithm, ALGORITHM_FIELDS),
                               runner=section(cfg.runner, RUNNER_FIELDS))
