"""h1_like on flat ground, from this file alone: ``python train.py --task examples/h1_like/h1_like.py:flat``.

A humanoid of the Unitree H1 kind (about 45 kg, 23 joints) whose MJCF file (h1_like.xml) follows MuJoCo
Menagerie's conventions and is used as it is:

- feet that are three unnamed collision capsules on each ankle roll body (``foot_bodies``: the foot touches the
  floor when any of them does);
- no armature in the file: each actuator group below sets its own (and the joints' damping);
- every joint accounted for: the 12 leg joints are trained, the torso and the arms' shoulders and elbows are held
  at a pose by servos outside the action space (``held``), the wrists are welded (``welded``: they cost nothing);
- the file's motor actuators are replaced by position servos on the trained and held joints.

Its task's settings are the built-in humanoid's (same size and mass: ``configs/humanoid.py``) and its learner
defaults (initial noise 0.5, left-right symmetry from the left_/right_ names) are set here through ``flat_task``.
See docs/robots.md, "Example: h1_like".
"""

from pathlib import Path

from configs.humanoid import HUMANOID_DEFAULTS, HUMANOID_ENV
from configs.locomotion import flat_task
from envs.robots.spec import ActuatorGroup, HeldJoints, RobotSpec, SimOverrides, WeldedJoints

H1_LIKE = RobotSpec(
    name="h1_like",
    mjcf=Path(__file__).with_name("h1_like.xml"),
    base_body="pelvis",
    # policy order: the left leg hip to foot, then the right one (the file's order within each pattern)
    joints=("left_(hip|knee|ankle).*_joint", "right_(hip|knee|ankle).*_joint"),
    default_pose={  # slightly bent knees, feet flat: hip pitch + knee + ankle pitch = 0
        ".*_hip_(yaw|roll)_joint": 0.0, ".*_hip_pitch_joint": -0.15, ".*_knee_joint": 0.3,
        ".*_ankle_pitch_joint": -0.15, ".*_ankle_roll_joint": 0.0,
    },
    actuators=(
        # legs: the built-in humanoid's gains (ankles stiffer than H1's: with 40 N m/rad it tips over its ankles)
        ActuatorGroup(joints=".*_hip_yaw_joint", kp=100.0, kd=2.5, effort_limit=120.0, armature=0.02, damping=0.3),
        ActuatorGroup(joints=".*_hip_(roll|pitch)_joint", kp=200.0, kd=5.0, effort_limit=150.0, armature=0.02,
                      damping=0.3),
        ActuatorGroup(joints=".*_knee_joint", kp=300.0, kd=6.0, effort_limit=200.0, armature=0.02, damping=0.3),
        ActuatorGroup(joints=".*_ankle_(pitch|roll)_joint", kp=300.0, kd=6.0, effort_limit=45.0, armature=0.01,
                      damping=0.3),
        # held joints: the torso and the arms, stiff enough to carry them through the gait
        ActuatorGroup(joints="torso_joint", kp=300.0, kd=6.0, effort_limit=150.0, armature=0.02, damping=0.3),
        ActuatorGroup(joints=".*_(shoulder_.*|elbow)_joint", kp=100.0, kd=2.0, effort_limit=40.0, armature=0.01,
                      damping=0.3),
    ),
    action_scale=0.25,
    base_height=0.97,  # a short drop onto the feet
    foot_bodies=(".*_ankle_roll_link",),  # three unnamed capsules each
    held=(
        HeldJoints("torso_joint", 0.0),
        HeldJoints(".*_shoulder_(roll|yaw)_joint", 0.0),
        HeldJoints(".*_shoulder_pitch_joint", 0.2),
        HeldJoints(".*_elbow_joint", 0.8),
    ),
    welded=WeldedJoints(".*_wrist_roll_joint", 0.0),
    termination_contacts=("pelvis", "torso_link"),
    penalized_contacts=(".*_hip_pitch_link", ".*_knee_link", ".*_elbow_link"),
    mass_body="torso_link",
    # The task's 5 ms steps with 4 / 6 solver iterations, as the built-in humanoid (the file has Menagerie's 2 ms).
    # The file sets no integrator, so MuJoCo's Euler applied the servos' kd explicitly and the ankles (kd 6 on
    # little inertia) oscillated at 9 rad/s: the robot check said "the servo is unstable ... still moving at
    # 9.3 rad/s: SimOverrides(integrator='implicitfast')".
    sim=SimOverrides(timestep=0.005, iterations=4, ls_iterations=6, integrator="implicitfast"),
)

flat = flat_task("h1-like-flat", H1_LIKE, HUMANOID_ENV, defaults=HUMANOID_DEFAULTS)
