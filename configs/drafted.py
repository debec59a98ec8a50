"""The tasks of a drafted robot (``tools.new_robot``'s files and ``menagerie:NAME`` without a reviewed spec):
a quadruped gets the flat (or rough) task's settings; a biped the built-in humanoid's (``configs/humanoid.py``:
commands, biped rewards, a smaller push, initial noise 0.5), its size-dependent settings scaled by its standing
height, its air-time reward twice the built-in humanoid's (BIPED_AIR_TIME), 1250 iterations (BIPED_ITERATIONS; its
``deploy`` task BIPED_DEPLOY_ITERATIONS).
Both use left-right symmetry augmentation when the joint names give twins (quadruped-flat reached its tracking
thresholds with 0.67x the samples with it: docs/learner.md), except on rough terrain (the height scan has no mirror
rule, so the env offers no mirror).

``deploy`` (``menagerie:NAME:deploy``, ``path/to/robot.py:deploy``): the flat task of that robot, biped settings
included, for the real robot (``configs.locomotion.deploy_env``): the policy observes only what a low state carries
(joint state, IMU, command, last action, 5 frames), with motor strength, latency, stiffness and damping randomized
on top of the flat task's friction, mass, gain and push randomization; the gains are the robot's (the draft's with
the check's ``--fix`` settings, or the file's). Symmetry augmentation as the flat task (when the joint names give
twins): the env mirrors the critic's observation (every term, base velocity included) as well as the policy's 5
frames, so the asymmetric actor-critic is augmented whole (docs/learner.md). Its ONNX export names the file's
joints, which the Unitree profiles map by (``deploy/unitree/profiles.py``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal, Optional

from configs.humanoid import HUMANOID_DEFAULTS, HUMANOID_ENV
from configs.locomotion import ROUGH_ENV, deploy_env, flat_task, rough_task
from configs.task_defaults import TaskDefaults
from contract.errors import UserError
from envs.registry import TaskSpec
from envs.robots.spec import RobotSpec
from envs.tasks.locomotion.config import LocomotionEnvConfig

KINDS = ("quadruped", "biped", "legged")
"""What a draft calls a robot: by its number of feet (4, 2, other)."""


BIPED_AIR_TIME = 2.0
"""``feet_air_time_biped``'s weight for a drafted biped: twice the built-in humanoid's 1.0. The term pays the swing
foot's air time through each single stance (about s^2 T per second for swing share s and step period T), a few
percent of the tracking rewards at 1.0: the G1-style test model by name reached the tracking and fall targets at 1.0
but kept both feet down 72% of the time (docs/robots.md)."""


BIPED_ITERATIONS = 1250
"""A drafted biped's training iterations (the built-in humanoid's 1000): the G1-style test model by name met every
humanoid target from iteration 1100 on, 50 minutes on the 2-core CPU, and was just short at 1000 (11% falls;
docs/robots.md)."""


BIPED_DEPLOY_ITERATIONS = 1500
"""A drafted biped's ``deploy`` task's iterations: it observes less and trains under hardware randomization, and the
G1-style test model's ``:deploy`` at 0.01 s met the tracking and fall targets from 800 on but kept its feet down
(each in the air 29% of the time at 1250, 31-34% from 1300 to 1500; target 30-70%: docs/deploy.md)."""


def biped_env(base_height_target: float, feet_clearance_height: float, feet_min_distance: float,
              min_base_height: float, deviation_joints: str = "") -> LocomotionEnvConfig:
    """The built-in humanoid's env with these size-dependent settings (no joint deviation term without
    ``deviation_joints``) and BIPED_AIR_TIME."""
    params = dataclasses.replace(HUMANOID_ENV.reward_params, base_height_target=base_height_target,
                                 feet_clearance_height=feet_clearance_height, feet_min_distance=feet_min_distance,
                                 deviation_joints=deviation_joints)
    rewards = dataclasses.replace(HUMANOID_ENV.rewards, feet_air_time_biped=BIPED_AIR_TIME,
                                  joint_deviation=HUMANOID_ENV.rewards.joint_deviation if deviation_joints else 0.0)
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
        defaults = dataclasses.replace(HUMANOID_DEFAULTS, symmetry=symmetry, max_iterations=BIPED_ITERATIONS)
    else:
        defaults = TaskDefaults(symmetry=symmetry)
    if terrain == "rough":  # no augmentation: the height scan has no mirror rule, so the env offers no mirror
        defaults = dataclasses.replace(defaults, symmetry="none")
        return rough_task(name, robot, _rough(env) if env is not None else None, defaults=defaults)
    if terrain == "deploy":
        if kind == "biped":
            defaults = dataclasses.replace(defaults, max_iterations=BIPED_DEPLOY_ITERATIONS)
        return flat_task(name, robot, deploy_env(env), f"{robot.name} on flat ground for the real robot: joint state "
                         "and IMU alone, hardware randomization (docs/deploy.md)", defaults=defaults)
    return flat_task(name, robot, env, defaults=defaults)


def file_deploy_task(ref: str) -> TaskSpec:
    """``path/to/robot.py:deploy``: the file's own ``deploy`` task, else the deployable task (module docstring) of
    the one ``RobotSpec`` the file defines, its kind and a biped's sizes drafted from its MJCF; one line when it
    defines none or several."""
    from envs.registry import own_task_or_sole_spec, remember
    from envs.robots.draft import draft

    robot = own_task_or_sole_spec(ref, "deploy", "deploy = flat_task(..., deploy_env(...)) (configs/drafted.py)")
    if not isinstance(robot, RobotSpec):
        return robot
    d = draft(Path(robot.mjcf), robot.name)
    mirror = robot.mirror is not None or bool(d.mirror_pairs)
    return remember(drafted_task(ref, robot, d.kind, "deploy", mirror, **d.biped_env))
