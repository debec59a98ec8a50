"""The H1/G1-sized humanoid of ``humanoid.xml`` as a RobotSpec: data only, resolved by name at build time.

Joint order (policy, actions, observations): left leg hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle roll,
then the right leg in the same order; feet: left, right. The arms' shoulder pitch, roll, yaw and elbow joints are
held at their pose by servos outside the action space (``held``). Gains and torque limits are of the order of
Unitree H1 / G1 leg motors (hips and knees 120-200 N m, ankles 45 N m); kp and kd were chosen so that the robot
stands under zero actions (tests/envs/tasks/test_humanoid.py).
"""

from __future__ import annotations

from pathlib import Path

from envs.robots.spec import ActuatorGroup, HeldJoints, RobotSpec

SIDES = ("left", "right")
"""Leg prefixes, in the order of the joints and the feet."""
LEG_JOINTS = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
"""Joints of one leg, hip to foot."""

HUMANOID = RobotSpec(
    name="humanoid",
    mjcf=Path(__file__).with_name("humanoid.xml"),
    base_body="pelvis",
    joints=tuple(f"{side}_{j}_joint" for side in SIDES for j in LEG_JOINTS),
    default_pose=(  # slightly bent knees, feet flat: hip pitch + knee + ankle pitch = 0
        (".*_hip_(yaw|roll)_joint", 0.0), (".*_hip_pitch_joint", -0.15), (".*_knee_joint", 0.3),
        (".*_ankle_pitch_joint", -0.15), (".*_ankle_roll_joint", 0.0),
    ),
    actuators=(  # ankles stiffer than H1 / G1's (about 40 N m/rad): with 40-200 the robot tips over its ankles
        # under zero actions (the joints in series are softer than gravity's toppling moment, about 315 N m/rad)
        ActuatorGroup(joints=".*_hip_yaw_joint", kp=100.0, kd=2.5, effort_limit=120.0),
        ActuatorGroup(joints=".*_hip_(roll|pitch)_joint", kp=200.0, kd=5.0, effort_limit=150.0),
        ActuatorGroup(joints=".*_knee_joint", kp=300.0, kd=6.0, effort_limit=200.0),
        ActuatorGroup(joints=".*_ankle_(pitch|roll)_joint", kp=300.0, kd=6.0, effort_limit=45.0),
        ActuatorGroup(joints=".*_(shoulder_(pitch|roll|yaw)|elbow)_joint", kp=100.0, kd=2.0, effort_limit=40.0),
    ),
    held=(HeldJoints(".*_(shoulder_(pitch|roll|yaw)|elbow)_joint", 0.0),),  # arms at the sides, forearms forward
    action_scale=0.25,
    base_height=0.97,  # a short drop onto the feet (the pelvis stands at about 0.967 m)
    foot_geoms=tuple(f"{side}_foot" for side in SIDES),
    termination_contacts=("pelvis", "torso", ".*_upper_arm", ".*_forearm"),
    penalized_contacts=(".*_thigh", ".*_shin"),
    mass_body="torso",
)
"""The built-in humanoid (``humanoid-flat``)."""
