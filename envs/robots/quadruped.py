"""The Go1-sized quadruped of ``quadruped.xml`` as a RobotSpec: data only, resolved by name at build time.

Leg order everywhere (joints, actuators, feet): front-right, front-left, rear-right, rear-left. The servos are
created on the named joints (the file's identical ones are replaced), so the PD law runs at every substep.
"""

from __future__ import annotations

from pathlib import Path

from envs.robots.spec import ActuatorGroup, RobotSpec

LEGS = ("FR", "FL", "RR", "RL")
"""Leg prefixes, in the order of the joints and the feet."""

QUADRUPED = RobotSpec(
    name="quadruped",
    mjcf=Path(__file__).with_name("quadruped.xml"),
    base_body="torso",
    joints=tuple(f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf")),
    default_pose=(
        ("(FR|RR)_hip_joint", -0.1), ("(FL|RL)_hip_joint", 0.1),
        ("F._thigh_joint", 0.8), ("R._thigh_joint", 1.0),
        (".*_calf_joint", -1.5),
    ),
    actuators=(
        ActuatorGroup(joints=".*_(hip|thigh)_joint", kp=20.0, kd=0.5, effort_limit=23.7),
        ActuatorGroup(joints=".*_calf_joint", kp=20.0, kd=0.5, effort_limit=35.55),
    ),
    action_scale=0.25,
    base_height=0.30,  # a short drop onto the feet (it stands at about 0.27 m)
    foot_geoms=tuple(f"{leg}_foot" for leg in LEGS),
    termination_contacts=("torso", ".*_thigh"),
    penalized_contacts=tuple(f"{leg}_calf" for leg in LEGS),
    mass_body="torso",
)
"""The built-in quadruped (``quadruped-flat``)."""
