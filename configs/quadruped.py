"""``quadruped-flat``: the built-in quadruped (``envs/robots/quadruped.py``) on the flat velocity-tracking task.

Its defaults are ``configs/locomotion.flat_config``: legged_gym's flat settings, with the machine's fastest
setup (MuJoCo Warp, else MJX, and 4096 envs on a GPU; native MuJoCo on a CPU), and three changes that make it walk
within two minutes on a 2-core CPU (``FLAT_QUADRUPED``, ``FLAT_ENV``, ``FLAT_DEFAULTS``; docs/benchmarks.md).
The other quadruped tasks keep the robot as ``envs/robots/quadruped.py`` has it.
"""

from __future__ import annotations

import dataclasses

from configs.locomotion import blind_task, flat_task, proprio_task, rough_task
from configs.task_defaults import TaskDefaults
from envs.registry import register
from envs.robots.quadruped import QUADRUPED
from envs.robots.spec import SimOverrides
from envs.tasks.locomotion.config import LocomotionEnvConfig, RewardParams

FLAT_QUADRUPED = dataclasses.replace(QUADRUPED, sim=SimOverrides(timestep=0.01, substeps=2))
"""The quadruped of ``quadruped-flat``: physics steps of 0.01 s, 2 per 50 Hz control step (the file's 0.005 s, 4
per step, elsewhere), half the physics' cost. The robot check passes there as at 0.005 s (standing, step
responses, 1024 random rollouts, none diverged: ``python train.py --task quadruped-flat --check``), and a
policy trained on it walks on the 1 kHz torque PD of the rehearsal (``deploy.rehearse``)."""
FLAT_ENV = LocomotionEnvConfig(reward_params=RewardParams(air_time_offset=0.25))
"""The flat env with ``feet_air_time`` paying steps longer than 0.25 s (legged_gym's 0.5 s makes the first short
steps cost, and runs with fewer envs stood still longer before they walked)."""
FLAT_DEFAULTS = TaskDefaults(cpu_num_envs=512)
"""512 envs on a CPU (1024 before): twice the updates per sample; the targets in fewer samples (256 stood still)."""

register(flat_task("quadruped-flat", FLAT_QUADRUPED, FLAT_ENV,
                   description="12-DoF quadruped tracking velocity commands on flat ground "
                               "(native MuJoCo on CPU; Warp / MJX on GPU)", defaults=FLAT_DEFAULTS))
ROUGH_QUADRUPED = dataclasses.replace(QUADRUPED, termination_contacts=("torso",),
                                      penalized_contacts=(".*_thigh", ".*_calf"))
"""On terrain the thighs brush stair edges: only a torso contact ends an episode, thigh and calf contacts are
penalized (legged_gym's A1 / Go1 settings)."""

register(rough_task("quadruped-rough", ROUGH_QUADRUPED,
                    description="the quadruped on generated terrain (stairs, slopes, rough, obstacles) with a "
                                "curriculum, a height scan and a privileged critic"))
register(blind_task("quadruped-flat-blind", QUADRUPED,
                    description="quadruped-flat without the base linear velocity in the policy's observation, an "
                                "LSTM policy (the critic keeps the velocity)"))
register(proprio_task("quadruped-flat-proprio", QUADRUPED,
                      description="quadruped-flat for a robot: the policy sees only what a robot's low state carries "
                                  "(joint state, IMU; 5 frames of history, no base velocity), with motor strength "
                                  "and latency randomized (docs/deploy.md)"))
