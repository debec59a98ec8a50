"""Constants of the Go1-sized quadruped in ``quadruped.xml``: the one place the task reads them from.

The actuators are MuJoCo position servos (``kp``, ``kv``, torque limit), so the PD law runs at every physics
substep on both backends. The task sends ``q_target = DEFAULT_JOINT_POS + ACTION_SCALE * action``.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

XML_PATH = Path(__file__).with_name("quadruped.xml")
"""The MJCF model."""

LEGS = ("FR", "FL", "RR", "RL")
"""Leg order everywhere (joints, actuators, feet, sensors): front-right, front-left, rear-right, rear-left."""

JOINT_NAMES = tuple(f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf"))
"""The 12 actuated joints in actuator order (hip abduction, hip flexion, knee per leg)."""

DEFAULT_JOINT_POS = (-0.1, 0.8, -1.5, 0.1, 0.8, -1.5, -0.1, 1.0, -1.5, 0.1, 1.0, -1.5)
"""Standing pose (rad), the zero of the action; in JOINT_NAMES order."""

KP = 20.0
"""Position gain of every actuator (N m / rad)."""
KD = 0.5
"""Velocity gain of every actuator (N m s / rad)."""
TORQUE_LIMITS = (23.7, 23.7, 35.55) * 4
"""Actuator torque limits (N m) in JOINT_NAMES order."""
ACTION_SCALE = 0.25
"""Joint target offset (rad) per unit of action."""

BASE_HEIGHT = 0.30
"""Initial torso height (m) at reset: a short drop onto the feet (the robot stands at about 0.27 m)."""
TORSO_BODY = "torso"
"""Body whose mass is randomized."""

TIMESTEP = 0.005
"""Physics timestep (s); must equal the XML option."""

# Sensor layout (sensordata columns), in the XML's order.
FOOT_TOUCH = slice(0, 4)
"""Normal contact force on each foot (N)."""
FORBIDDEN_TOUCH = slice(4, 9)
"""Torso and the four thighs: any contact ends the episode."""
CALF_TOUCH = slice(9, 13)
"""The four calves: contact is penalized."""
FOOT_POS = slice(13, 25)
"""World position of each foot centre, 4 x 3."""
FOOT_VEL = slice(25, 37)
"""World linear velocity of each foot centre, 4 x 3."""
FOOT_RADIUS = 0.02
"""Radius of the sphere feet (m)."""


def load_model(collisions: str = "full", solver_iterations: int | None = None,
               ls_iterations: int | None = None) -> mujoco.MjModel:
    """The compiled model. ``collisions="feet"``: only the four foot spheres keep colliding with the floor;
    solver / line-search iterations override the XML's options where given."""
    model = mujoco.MjModel.from_xml_path(str(XML_PATH))
    if collisions == "feet":
        feet = {model.geom(f"{leg}_foot").id for leg in LEGS}
        for i in range(model.ngeom):
            if i not in feet:
                model.geom_contype[i] = 0
    if solver_iterations is not None:
        model.opt.iterations = solver_iterations
    if ls_iterations is not None:
        model.opt.ls_iterations = ls_iterations
    return model
