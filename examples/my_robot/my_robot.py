"""my_robot on flat ground, from this file alone: ``python train.py --task examples/my_robot/my_robot.py:flat``
(``:rough`` for generated terrain).

The robot file (my_robot.xml) is used as it is: its motors are replaced by position servos on the named joints,
and the scene adds the floor and every sensor the task needs. See docs/robots.md.
"""

import dataclasses
from pathlib import Path

from configs.locomotion import flat_task, rough_task
from envs.robots.spec import ActuatorGroup, RobotSpec, SimOverrides

MY_ROBOT = RobotSpec(
    name="my_robot",
    mjcf=Path(__file__).with_name("my_robot.xml"),
    base_body="base",
    joints=("FR_.*_joint", "FL_.*_joint", "RR_.*_joint", "RL_.*_joint"),  # policy order (the file's is FL, FR, RL, RR)
    default_pose={".*_hip_joint": 0.0, "F._thigh_joint": 0.8, "R._thigh_joint": 1.0, ".*_calf_joint": -1.5},
    actuators=(
        ActuatorGroup(joints=".*_(hip|thigh)_joint", kp=20.0, kd=0.5, effort_limit=23.7),
        ActuatorGroup(joints=".*_calf_joint", kp=20.0, kd=0.5, effort_limit=35.55),
    ),
    action_scale=0.25,
    base_height=0.32,
    foot_geoms=("FR", "FL", "RR", "RL"),
    termination_contacts=("base", ".*_thigh"),
    penalized_contacts=(".*_calf",),
    # Menagerie-style files ask for elliptic cones and impratio 100; the cheaper settings train as well here.
    sim=SimOverrides(timestep=0.005, iterations=4, ls_iterations=6, cone="pyramidal", impratio=1.0),
)

flat = flat_task("my-robot-flat", MY_ROBOT)

# On terrain the thighs brush stair edges: they are penalized instead of ending the episode.
rough = rough_task("my-robot-rough", dataclasses.replace(MY_ROBOT, termination_contacts=("base",),
                                                         penalized_contacts=(".*_thigh", ".*_calf")))
