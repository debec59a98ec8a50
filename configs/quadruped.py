"""``quadruped-flat``: the built-in quadruped (``envs/robots/quadruped.py``) on the flat velocity-tracking task.

Its defaults are ``configs/locomotion.flat_config``: legged_gym's flat settings, with the machine's fastest
setup (MuJoCo Warp, else MJX, and 4096 envs on a GPU; native MuJoCo and 1024 envs on a CPU).
"""

from __future__ import annotations

import dataclasses

from configs.locomotion import blind_task, flat_task, proprio_task, rough_task
from envs.registry import register
from envs.robots.quadruped import QUADRUPED

register(flat_task("quadruped-flat", QUADRUPED,
                   description="12-DoF quadruped tracking velocity commands on flat ground "
                               "(native MuJoCo on CPU; Warp / MJX on GPU)"))
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
