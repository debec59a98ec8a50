"""anymal_like on flat ground, from this file alone:
``python train.py --task examples/anymal_like/anymal_like.py:flat``.

A quadruped of the ANYbotics kind (about 52 kg) whose MJCF file (anymal_like.xml) follows MuJoCo Menagerie's
conventions and is used as it is: LF/RF/LH/RH_HAA/HFE/KFE joints (the mirror is found from these names), feet
that are unnamed collision geoms, four on each shank body (``foot_bodies``), the file's own position actuators
(``actuators="file"``: its kp, kv, force range, armature and damping are kept) and a keyframe (dropped by the
assembly). Its reward weights are legged_gym's ANYmal C flat ones (torques -2.5e-5, feet air time 2); its action scale
is the built-in quadruped's 0.25. See docs/robots.md, "Example: anymal_like".
"""

from pathlib import Path

from configs.locomotion import flat_task
from envs.robots.spec import FILE_ACTUATORS, RobotSpec, SimOverrides
from envs.tasks.locomotion.config import LocomotionEnvConfig, RewardScales

ANYMAL_LIKE = RobotSpec(
    name="anymal_like",
    mjcf=Path(__file__).with_name("anymal_like.xml"),
    base_body="base",
    joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"),  # policy order: legs, then the file's HAA, HFE, KFE
    default_pose={".*_HAA": 0.0, ".F_HFE": 0.4, ".H_HFE": -0.4, ".F_KFE": -0.8, ".H_KFE": 0.8},  # "X" stance
    actuators=FILE_ACTUATORS,  # the file's position actuators: kp 100, kv 3, 80 N m
    # legged_gym's ANYmal C uses 0.5 (with its actuator network): here, with the initial action noise of 1, every
    # step's total reward was clipped to 0 and the run fell in 100% of its episodes; 0.25 learns
    action_scale=0.25,
    base_height=0.62,  # a short drop onto the feet (it stands at about 0.58 m)
    foot_bodies=(".._SHANK",),  # four unnamed collision geoms per shank: the foot is the body
    termination_contacts=("base",),
    penalized_contacts=(".*_THIGH", ".*_HIP"),
    # The file asks for elliptic cones, impratio 100 and 4 ms steps; the robot check's solver search (docs) found
    # the task's usual settings stable and cheaper.
    sim=SimOverrides(timestep=0.005, iterations=4, ls_iterations=6, cone="pyramidal", impratio=1.0),
)

ANYMAL_LIKE_ENV = LocomotionEnvConfig(
    rewards=RewardScales(torques=-2.5e-5, feet_air_time=2.0),  # legged_gym's ANYmal C flat weights
)

flat = flat_task("anymal-like-flat", ANYMAL_LIKE, ANYMAL_LIKE_ENV)
