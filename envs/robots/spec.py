"""``RobotSpec``: a legged robot as data. Names and regexes, resolved to indices once, at build time, by name.

A robot file (``envs/robots/quadruped.py``, ``examples/my_robot/my_robot.py``) is one ``RobotSpec`` instance.
Nothing here depends on the order of bodies, joints, actuators or sensors in the MJCF file: joints are picked by
name or regex (the order of the patterns, then the file's order within one regex, is the policy's order), and the
task's sensors are added by ``envs/scenes`` when the robot is attached into a scene. ``envs/scenes/assemble.py``
checks every name and raises a one-line ``UserError`` (exit status 2) naming the field and what the model has.

Patterns are Python regular expressions matched against the whole name (``re.fullmatch``); a plain name is a
pattern that matches itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional, Union

from envs.robots.sides import MirrorMap

Pose = tuple[tuple[str, float], ...]


EFFORT_SCALE = "effort"
"""``ActuatorGroup.action_scale`` value: EFFORT_SCALE_FACTOR x effort_limit / kp per joint (mjlab's rule)."""
EFFORT_SCALE_FACTOR = 0.25
"""The factor of ``action_scale=EFFORT_SCALE``: an action of 1 asks for a quarter of the joint's torque limit."""


@dataclass(frozen=True)
class ActuatorGroup:
    """MuJoCo position servos (PD at every physics substep) on the joints one regex matches, and the joints'
    own properties (armature, damping, friction loss), written onto those joints at assembly."""

    joints: str
    """Regex over the trained and held joints' names; each of them must match exactly one group."""
    kp: float
    """Position gain (N m / rad)."""
    kd: float
    """Velocity gain (N m s / rad)."""
    effort_limit: float
    """Torque limit (N m): the servo's force range is [-effort_limit, effort_limit]."""
    armature: Optional[float] = None
    """Rotor inertia reflected through the gearbox (kg m^2), written onto the joints (None: keep the file's).
    Robot files rarely carry it and training frameworks add it; without it light limbs under stiff servos can
    make the simulation diverge."""
    damping: Optional[float] = None
    """Joint damping (N m s / rad), written onto the joints (None: keep the file's)."""
    frictionloss: Optional[float] = None
    """Joint dry friction (N m), written onto the joints (None: keep the file's)."""
    action_scale: Union[float, Literal["effort"], None] = None
    """Joint target offset (rad) per unit of action for these joints: a number, ``"effort"`` (EFFORT_SCALE:
    0.25 x effort_limit / kp, mjlab's rule), or None: ``RobotSpec.action_scale``."""
    velocity_limit: Optional[float] = None
    """Joint speed limit of the motors (rad/s), where the robot has one: exported per joint
    (``velocity_limits``) for deployment; the simulation does not enforce it (None: no limit, exported as inf)."""


@dataclass(frozen=True)
class JointProperties:
    """Armature, damping and friction loss written onto the joints one regex matches, whatever drives them (the
    way to set them with ``actuators="file"``; with actuator groups, their own fields do the same)."""

    joints: str
    """Regex over the trained and held joints' names (each joint matched by at most one entry)."""
    armature: Optional[float] = None
    """Rotor inertia reflected through the gearbox (kg m^2; None: keep the file's)."""
    damping: Optional[float] = None
    """Joint damping (N m s / rad; None: keep the file's)."""
    frictionloss: Optional[float] = None
    """Joint dry friction (N m; None: keep the file's)."""


@dataclass(frozen=True)
class HeldJoints:
    """Joints kept out of the action space and held at a pose by position servos (their actuator group's gains,
    or the file's own position actuators with ``actuators="file"``): a waist or arms while the legs learn."""

    joints: str
    """Regex over joint names (hinge / slide joints of the file)."""
    pose: Union[float, Pose] = 0.0
    """The held angle (rad): one number for every matched joint, or joint name or regex -> angle (each matched
    joint matched by exactly one entry; a dict is accepted)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "pose", _pose(self.pose))


@dataclass(frozen=True)
class WeldedJoints:
    """Joints removed at assembly: the child body is fixed to its parent at the pose (the joint rotated or slid by
    the angle about its own axis and anchor), so the joint costs nothing in the simulation."""

    joints: str
    """Regex over joint names (any non-free joint of the file)."""
    pose: Union[float, Pose] = 0.0
    """The angle (rad; m for slide joints) it is welded at: a number, or joint name or regex -> angle (hinge and
    slide joints only; a ball joint is welded at its reference orientation, pose 0)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "pose", _pose(self.pose))


def _pose(value: Union[float, Pose, Mapping[str, float]]) -> Union[float, Pose]:
    if isinstance(value, (int, float)):
        return float(value)
    items = value.items() if isinstance(value, Mapping) else value
    return tuple((str(k), float(v)) for k, v in items)


GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf")
"""Allowed values of ``FootGeom.type`` (MuJoCo's geom type names)."""


@dataclass(frozen=True)
class FootGeom:
    """One collision geom of a foot body, for files whose foot geoms are unnamed or share a body with other
    collision geoms (an ANYbotics shank carries a knee drive, a shank capsule and the foot sphere): the body, and
    the geom among its collision geoms picked by its default class, its type or its index. The foot is named after
    its body, and only that geom counts as the foot (its touch site and position are the geom's)."""

    body: str
    """The foot body, by name or regex (a regex gives one foot per matched body, in the file's order)."""
    geom_class: Optional[str] = None
    """The default class of the geom (``class="foot"`` in the file): exactly one collision geom of the body."""
    type: Optional[str] = None
    """The geom type (GEOM_TYPES: ``"sphere"``, ``"capsule"``, ...): exactly one collision geom of the body."""
    index: Optional[int] = None
    """The index among the body's collision geoms, in the file's order (0 = the first)."""


FILE_ACTUATORS = "file"
"""``RobotSpec.actuators`` value: keep the file's own position actuators (one per actuated joint) as they are."""


@dataclass(frozen=True)
class SimOverrides:
    """Simulation options that replace the MJCF file's (None: keep the file's value)."""

    timestep: Optional[float] = None
    """Physics timestep (s)."""
    substeps: Optional[int] = None
    """Physics steps per control step: the task's ``env.decimation`` (None: the task's, 4 at the usual 0.005 s
    step). ``check_robot --fix`` writes 2 with ``timestep=0.01`` when the robot passes the whole check there: the
    same 50 Hz control at half the physics' cost (``envs/robot_check/fix_step.py``). With ``timestep`` set, the
    control step ``timestep * substeps`` is kept: another ``env.decimation`` (the command line's, or a checkpoint's
    written at another step) divides it (``envs/scenes/assemble.step_for``)."""
    iterations: Optional[int] = None
    """Constraint-solver iterations per step (``env.solver_iterations`` overrides this again)."""
    ls_iterations: Optional[int] = None
    """Line-search iterations per solver iteration (``env.ls_iterations`` overrides this again)."""
    solver: Optional[Literal["newton", "cg", "pgs"]] = None
    """Constraint solver (``--fix`` keeps the file's: CG, cheaper per step on the Unitree-style test model, passed
    the robot check there but diverged under the trained policy; docs/robots.md)."""
    cone: Optional[Literal["pyramidal", "elliptic"]] = None
    """Friction cone (Menagerie files often use elliptic, which costs more per contact)."""
    impratio: Optional[float] = None
    """Ratio of frictional to normal constraint impedance (Menagerie files often use 100)."""
    foot_condim: Optional[int] = None
    """Contact dimensionality of the foot geoms (FOOT_CONDIMS: 1 frictionless, 3 sliding friction, 4 and torsional,
    6 and rolling; Menagerie's Go2 feet use 6, MuJoCo Playground's and mjlab's Go1 / Go2 feet 3)."""
    integrator: Optional[Literal["euler", "implicitfast", "implicit", "rk4"]] = None
    """Numerical integrator. A file without one gets MuJoCo's default, Euler, which applies the servos' kd
    explicitly: a stiff kd on a light joint (an ankle, a wrist) then oscillates at 5 ms steps; ``implicitfast``
    integrates it implicitly (the robot check's step response shows which)."""


@dataclass(frozen=True)
class RobotSpec:
    """Everything the locomotion task needs to know about one legged robot (data, no code)."""

    name: str
    """Short name, used in messages and exported metadata."""
    mjcf: Path
    """The robot's MJCF file (any file MuJoCo loads, meshes found relative to it), used unmodified: no floor or
    task sensors needed. Relative paths are relative to the current directory; robot files use
    ``Path(__file__).parent / "robot.xml"``."""
    base_body: str
    """The floating base: a body with a free joint."""
    joints: tuple[str, ...]
    """Actuated joints by name or regex, in policy order (pattern order, then file order within a pattern)."""
    default_pose: Pose
    """Standing pose: joint name or regex -> angle (rad); every actuated joint must match exactly one entry. It is
    the zero of the action. A dict is accepted and kept in its order."""
    actuators: Union[tuple[ActuatorGroup, ...], Literal["file"]]
    """Position servos created on the trained and held joints (the file's own actuators are removed), or
    ``"file"`` (FILE_ACTUATORS) to keep the file's position actuators (one per trained or held joint)."""
    base_height: float
    """Height (m) of the base at reset: a short drop onto the feet."""
    action_scale: Optional[float] = None
    """Joint target offset (rad) per unit of action: target = default pose + action_scale * action; the default
    of actuator groups that set no ``action_scale`` of their own (None: every group sets its own; required with
    ``actuators="file"``)."""
    foot_geoms: tuple[Union[str, FootGeom], ...] = ()
    """Feet as collision geoms: by name or regex, or a ``FootGeom`` (a body's geom picked by class, type or index,
    for unnamed geoms); give these or ``foot_bodies``; order = order of foot columns."""
    foot_bodies: tuple[str, ...] = ()
    """Feet as bodies by name or regex, instead of ``foot_geoms``: each with any number of collision geoms, named
    or not (the foot touches the floor when any of them does)."""
    termination_contacts: tuple[str, ...] = ()
    """Bodies (name or regex) whose contact with the floor ends an episode (foot geoms excluded)."""
    penalized_contacts: tuple[str, ...] = ()
    """Bodies (name or regex) whose contacts with the floor are penalized (foot geoms excluded)."""
    visual_groups: tuple[int, ...] = ()
    """Geom groups that are visual only (Menagerie puts visuals in group 2): their geoms never collide, whatever
    their contype / conaffinity. Geoms with contype = conaffinity = 0 are visual anyway."""
    mass_body: Optional[str] = None
    """Body whose mass is randomized (None: the base body)."""
    sim: SimOverrides = field(default_factory=SimOverrides)
    """Simulation options that replace the file's."""
    held: tuple[HeldJoints, ...] = ()
    """Joints held at a pose by position servos, outside the action space (see HeldJoints)."""
    welded: tuple[WeldedJoints, ...] = ()
    """Joints removed at assembly, their bodies fixed at a pose (see WeldedJoints). Every non-free joint of the
    file is trained (``joints``), held or welded: any other is an error."""
    joint_properties: tuple[JointProperties, ...] = ()
    """Armature, damping and friction loss per joint regex, written at assembly over the file's (see
    JointProperties): for the file's own actuators; a property an actuator group also sets for a joint is an
    error."""
    mirror: Optional[MirrorMap] = None
    """Left-right twins for names no common convention covers (None: found from the names, ``envs/robots/sides.py``:
    left/right, l/r, L_/R_, FL/FR/RL/RR, LF/RF/LH/RH)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "mjcf", Path(self.mjcf))
        object.__setattr__(self, "visual_groups", tuple(int(g) for g in self.visual_groups))
        for name in ("joints", "foot_geoms", "foot_bodies", "termination_contacts", "penalized_contacts"):
            value = getattr(self, name)
            single = isinstance(value, (str, FootGeom))
            object.__setattr__(self, name, (value,) if single else tuple(value))
        pose = self.default_pose
        items = pose.items() if isinstance(pose, Mapping) else pose
        object.__setattr__(self, "default_pose", tuple((str(k), float(v)) for k, v in items))
        for name in ("held", "welded", "joint_properties"):
            value = getattr(self, name)
            single = isinstance(value, (HeldJoints, WeldedJoints, JointProperties))
            object.__setattr__(self, name, (value,) if single else tuple(value))
        if isinstance(self.actuators, ActuatorGroup):
            object.__setattr__(self, "actuators", (self.actuators,))
        elif not isinstance(self.actuators, str):  # a typo'd string is reported by envs/robots/checks.py
            object.__setattr__(self, "actuators", tuple(self.actuators))

    @property
    def mass_body_name(self) -> str:
        """The body whose mass is randomized."""
        return self.mass_body or self.base_body
