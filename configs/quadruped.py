"""``quadruped-flat``: the built-in quadruped (``envs/robots/quadruped.py``) on the flat velocity-tracking task.

Its defaults are ``configs/locomotion.flat_config``: legged_gym's flat settings, with the machine's fastest
setup (MJX and 4096 envs on a GPU, native MuJoCo and 1024 envs on a CPU).
"""

from __future__ import annotations

from configs.locomotion import flat_config, flat_task
from envs.registry import register
from envs.robots.quadruped import QUADRUPED
from rl_core.config import TrainConfig


def quadruped_flat() -> TrainConfig:
    return flat_config()


register(flat_task("quadruped-flat", QUADRUPED,
                   description="12-DoF quadruped tracking velocity commands on flat ground (native MuJoCo on CPU, MJX on GPU)"))
