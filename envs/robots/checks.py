"""Checks of a RobotSpec's own values, before its MJCF is even read: one-line ``UserError`` naming the field and
the allowed values (literal options, non-negative gains and limits, finite numbers).

The checks that need the model (names, the default pose inside each joint's range) are in
``envs/scenes/assemble.py``.
"""

from __future__ import annotations

import math
from typing import Any

from contract.errors import UserError
from envs.robots.spec import (
    EFFORT_SCALE,
    FILE_ACTUATORS,
    ActuatorGroup,
    HeldJoints,
    JointProperties,
    RobotSpec,
    WeldedJoints,
)

CONES = ("pyramidal", "elliptic")
"""Allowed values of ``SimOverrides.cone``."""
FOOT_CONDIMS = (1, 3, 4, 6)
"""Allowed values of ``SimOverrides.foot_condim`` (MuJoCo's contact dimensionalities)."""
SOLVER_NAMES = ("newton", "cg", "pgs")
"""Allowed values of ``SimOverrides.solver``."""
INTEGRATOR_NAMES = ("euler", "implicitfast", "implicit", "rk4")
"""Allowed values of ``SimOverrides.integrator``."""
COLLISIONS = ("full", "feet")
"""Allowed values of the collision model (``env.collisions``)."""


def _fail(robot: RobotSpec, field: str, problem: str) -> UserError:
    return UserError(f"robot spec '{robot.name}' field {field}: {problem}")


def _number(robot: RobotSpec, field: str, value: Any, positive: bool = False, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(robot, field, f"{value!r} is not a finite number")
    if value < 0 or (positive and value == 0):
        raise _fail(robot, field, f"{value!r} is {'not positive' if positive else 'negative'}; allowed: "
                                  f"{'> 0' if positive else '>= 0'}")


def check_collisions(robot: RobotSpec, collisions: str) -> None:
    if collisions not in COLLISIONS:
        raise UserError(f"config error: env.collisions {collisions!r} (robot '{robot.name}') is not one of: "
                        f"{', '.join(COLLISIONS)}")


def check_spec(robot: RobotSpec) -> None:
    """Every value of ``robot`` that can be checked without its model; raises a one-line UserError."""
    _check_actuators(robot)
    _number(robot, "action_scale", robot.action_scale, positive=True, optional=True)
    _check_scale_given(robot)
    _number(robot, "base_height", robot.base_height, positive=True)
    kinds: tuple[tuple[str, type], ...] = (("held", HeldJoints), ("welded", WeldedJoints),
                                           ("joint_properties", JointProperties))
    for field, kind in kinds:
        for k, h in enumerate(getattr(robot, field)):
            if not isinstance(h, kind):
                raise _fail(robot, f"{field}[{k}]", f"{h!r} is not a {kind.__name__}")
    for k, jp in enumerate(robot.joint_properties):
        for name in ("armature", "damping", "frictionloss"):
            _number(robot, f"joint_properties[{k}] ({jp.joints!r}).{name}", getattr(jp, name), optional=True)
    _check_sim(robot)


def _check_actuators(robot: RobotSpec) -> None:
    acts = robot.actuators
    if isinstance(acts, str):
        if acts != FILE_ACTUATORS:
            raise _fail(robot, "actuators", f"{acts!r} is not allowed; allowed: {FILE_ACTUATORS!r} (keep the file's "
                                            "position actuators) or a tuple of ActuatorGroup")
        return
    if not acts:
        raise _fail(robot, "actuators", f"no actuator group; allowed: {FILE_ACTUATORS!r} or a tuple of "
                                        "ActuatorGroup")
    for k, g in enumerate(acts):
        if not isinstance(g, ActuatorGroup):
            raise _fail(robot, f"actuators[{k}]", f"{g!r} is not an ActuatorGroup")
        _check_group(robot, f"actuators[{k}] ({g.joints!r})", g)


def _check_scale_given(robot: RobotSpec) -> None:
    """``RobotSpec.action_scale`` may be None only when every actuator group sets its own."""
    if robot.action_scale is not None:
        return
    if isinstance(robot.actuators, str):
        raise _fail(robot, "action_scale", "None is not allowed with actuators='file' (the file's actuators have no "
                                           "action scale); allowed: a number > 0")
    lacking = [f"actuators[{k}] ({g.joints!r})" for k, g in enumerate(robot.actuators)
               if isinstance(g, ActuatorGroup) and g.action_scale is None]
    if lacking:
        raise _fail(robot, "action_scale", f"None, and {', '.join(lacking)} set no action_scale of their own; give "
                                           "RobotSpec.action_scale (a number > 0) or each group's")


def _check_group(robot: RobotSpec, at: str, g: ActuatorGroup) -> None:
    for name in ("kp", "kd", "effort_limit"):
        _number(robot, f"{at}.{name}", getattr(g, name), positive=name == "effort_limit")
    for name in ("armature", "damping", "frictionloss"):
        _number(robot, f"{at}.{name}", getattr(g, name), optional=True)
    _number(robot, f"{at}.velocity_limit", g.velocity_limit, positive=True, optional=True)
    if isinstance(g.action_scale, str):
        if g.action_scale != EFFORT_SCALE:
            raise _fail(robot, f"{at}.action_scale", f"{g.action_scale!r} is not allowed; allowed: a number, "
                                                     f"{EFFORT_SCALE!r} (0.25 x effort_limit / kp) or None")
        if g.kp <= 0:
            raise _fail(robot, f"{at}.action_scale", f"{EFFORT_SCALE!r} needs kp > 0 (kp is {g.kp})")
    else:
        _number(robot, f"{at}.action_scale", g.action_scale, positive=True, optional=True)


def _check_sim(robot: RobotSpec) -> None:
    sim = robot.sim
    if sim.cone is not None and sim.cone not in CONES:
        raise _fail(robot, "sim.cone", f"{sim.cone!r} is not allowed; allowed: {', '.join(CONES)} or None")
    if sim.solver is not None and sim.solver not in SOLVER_NAMES:
        raise _fail(robot, "sim.solver", f"{sim.solver!r} is not allowed; allowed: {', '.join(SOLVER_NAMES)} or None")
    if sim.integrator is not None and sim.integrator not in INTEGRATOR_NAMES:
        raise _fail(robot, "sim.integrator", f"{sim.integrator!r} is not allowed; allowed: "
                                             f"{', '.join(INTEGRATOR_NAMES)} or None")
    if sim.foot_condim is not None and (isinstance(sim.foot_condim, bool) or sim.foot_condim not in FOOT_CONDIMS):
        raise _fail(robot, "sim.foot_condim", f"{sim.foot_condim!r} is not allowed; allowed: "
                                              f"{', '.join(map(str, FOOT_CONDIMS))} or None")
    _number(robot, "sim.timestep", sim.timestep, positive=True, optional=True)
    _number(robot, "sim.impratio", sim.impratio, positive=True, optional=True)
    for name in ("substeps", "iterations", "ls_iterations"):
        value = getattr(sim, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise _fail(robot, f"sim.{name}", f"{value!r} is not allowed; allowed: an integer >= 1 or None")

