"""The tasks of a drafted robot (``tools.new_robot``'s files and ``menagerie:NAME`` without a reviewed spec):
a quadruped gets the flat (or rough) task's settings; a biped the built-in humanoid's (``configs/humanoid.py``:
commands, biped rewards, a smaller push, initial noise 0.5), its size-dependent settings scaled by its standing
height. Both use left-right symmetry augmentation when the joint names give twins (quadruped-flat reached its
tracking thresholds with 0.67x the samples with it: docs/learner.md).
"""

from __future__ import annotations

import dataclasses
from typing import Literal, Optional

from configs.humanoid import HUMANOID_DEFAULTS, HUMANOID_ENV
from configs.locomotion import ROUGH_ENV, flat_task, rough_task
from configs.task_defaults import TaskDefaults
from envs.registry import TaskSpec
from envs.robots.spec import RobotSpec
from envs.tasks.locomotion.config import LocomotionEnvConfig
from contract.errors import UserError

KINDS = ("quadruped", "biped", "legged")
"""What a draft calls a robot: by its number of feet (4, 2, other)."""


def biped_env(base_height_target: float, feet_clearance_height: float, feet_min_distance: float,
              min_base_height: float, deviation_joints: str = "") -> LocomotionEnvConfig:
    """The built-in humanoid's env with these size-dependent settings (no joint deviation term without
    ``deviation_joints``)."""
    params = dataclasses.replace(HUMANOID_ENV.reward_params, base_height_target=base_height_target,
                                 feet_clearance_height=feet_clearance_height, feet_min_distance=feet_min_distance,
                                 deviation_joints=deviation_joints)
    rewards = HUMANOID_ENV.rewards if deviation_joints else dataclasses.replace(HUMANOID_ENV.rewards,
                                                                               joint_deviation=0.0)
    return dataclasses.replace(HUMANOID_ENV, reward_params=params, rewards=rewards, min_base_height=min_base_height)


def _rough(env: LocomotionEnvConfig) -> LocomotionEnvConfig:
    """``env`` with the rough task's changes (``configs.locomotion.ROUGH_ENV``)."""
    return dataclasses.replace(env, terrain=ROUGH_ENV.terrain, height_scan=ROUGH_ENV.height_scan,
                               privileged_critic=ROUGH_ENV.privileged_critic,
                               commands=dataclasses.replace(env.commands, heading=True),
                               rewards=dataclasses.replace(env.rewards, orientation=0.0))


def drafted_task(name: str, robot: RobotSpec, kind: str, terrain: str = "flat", mirror: bool = True,
                 **sizes: float | str) -> TaskSpec:
    """The task of a drafted robot (module docstring); ``sizes``: a biped's ``biped_env`` arguments."""
    if kind not in KINDS:
        raise UserError(f"drafted_task {name!r}: kind {kind!r} is not allowed; allowed: {', '.join(KINDS)}")
    symmetry: Literal["none", "augment"] = "augment" if mirror else "none"
    env: Optional[LocomotionEnvConfig] = None
    if kind == "biped":
        env = biped_env(**sizes)  # type: ignore[arg-type]
        defaults = dataclasses.replace(HUMANOID_DEFAULTS, symmetry=symmetry)
    else:
        defaults = TaskDefaults(symmetry=symmetry)
    if terrain == "rough":
        return rough_task(name, robot, _rough(env) if env is not None else None, defaults=defaults)
    return flat_task(name, robot, env, defaults=defaults)
