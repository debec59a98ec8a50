"""Put a robot (``RobotSpec``) and a scene together with ``mujoco.MjSpec``, add what the task senses, compile.

Steps, all by name: check the spec's own values (``envs/robots/checks.py``); load the robot's MJCF unmodified;
check every name of the spec against it, and that every non-free joint is trained, held or welded at a pose
inside its range (``joints.py``); find the feet (``feet.py``) and the watched collision geoms (``contacts.py``);
replace its actuators by position servos on the trained and held joints, with the groups' armature, damping and
friction loss written onto the joints (or keep its own position actuators, ``actuators="file"``;
``actuators.py``); remove the welded joints; drop its sensors and keyframes (the task adds its own sensors, and
keyframes would not fit the new actuators); apply the simulation overrides and the collision filter; attach the
scene (``flat.py``: floor, light, textures; or ``terrain.py``: a heightfield floor) into the robot's spec, so the
robot keeps its file's names and options; add on the robot, never in its file, the task's sites, sensors and
tracking camera (``sensing.py``). Any problem is a one-line ``UserError`` naming the spec field and listing what
the model has.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco

from contract.errors import UserError
from envs.robots.checks import check_collisions, check_spec
from envs.robots.names import spec_error
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.scenes.actuators import Actuation, actuate
from envs.scenes.contacts import ContactGeoms, contact_geoms, filter_collisions, name_geoms, split_geoms
from envs.scenes.feet import Feet, resolve_feet
from envs.scenes.flat import attach_scene, flat_scene
from envs.scenes.joints import JointPlan, plan_joints, weld
from envs.scenes.options import PLAIN, SceneOptions
from envs.scenes.physics_only import physics_only
from envs.scenes.sensing import TaskSensors, add_task_sensing
from envs.scenes.terrain import terrain_scene

_CONE = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER, "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
               "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT, "rk4": mujoco.mjtIntegrator.mjINT_RK4}
"""``SimOverrides.integrator`` values."""
SOLVERS = {"newton": mujoco.mjtSolver.mjSOL_NEWTON, "cg": mujoco.mjtSolver.mjSOL_CG, "pgs": mujoco.mjtSolver.mjSOL_PGS}
"""``SimOverrides.solver`` values."""


@dataclass(frozen=True)
class _FileNames:
    """Element names of the robot file compiled on its own, by id ("" for an unnamed element)."""

    bodies: list[str]
    joints: list[str]
    geoms: list[str]


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def load_robot_spec(robot: RobotSpec) -> tuple[mujoco.MjSpec, mujoco.MjModel]:
    """The robot file as an MjSpec and compiled on its own (to read its names); one-line errors."""
    path = Path(robot.mjcf)
    if not path.is_file():
        raise UserError(f"robot spec '{robot.name}' field mjcf: {path} does not exist")
    try:
        spec = mujoco.MjSpec.from_file(str(path))
        model = spec.compile()
    except Exception as e:  # MuJoCo raises ValueError with its parser / compiler message
        raise UserError(f"robot spec '{robot.name}' field mjcf: {path} does not compile: {one_line(e)}") from None
    return spec, model


def build(robot: RobotSpec, options: SceneOptions = PLAIN) -> ResolvedRobot:
    """The compiled scene with ``robot`` attached, and every index the task needs (see module docstring), built as
    ``options`` says (collisions, solver settings, a generated terrain or a window of it as the floor, the scene
    without what only drawing uses: ``envs/scenes/options.py``)."""
    collisions = options.collisions
    check_spec(robot)
    check_collisions(robot, collisions)
    rspec, m0 = load_robot_spec(robot)
    names = _file_names(m0)
    base_joint = _base_joint(robot, rspec, m0, names)
    plan = plan_joints(robot, m0, names.joints)
    visual, colliding = split_geoms(robot, m0)
    classes = {g.id: g.classname.name for g in rspec.geoms}
    feet = resolve_feet(robot, m0, names.bodies, names.geoms, colliding, [classes.get(g, "") for g in range(m0.ngeom)])
    contacts = contact_geoms(robot, m0, names.bodies, visual, colliding, feet)
    if robot.mass_body_name not in names.bodies:
        raise spec_error(robot.name, "mass_body", f"no body named {robot.mass_body_name!r}", names.bodies[1:],
                         "bodies")
    act = actuate(robot, rspec, m0, plan, names.joints)
    weld(rspec, m0, plan, names.joints)
    _strip_file_extras(rspec)
    _apply_options(robot, rspec, options)
    _foot_condim(robot, rspec, feet)
    geom_name = name_geoms(rspec, m0, names.bodies, contacts.sensed)
    filter_collisions(rspec, contacts, collisions)
    # the scene's names get SCENE_PREFIX; the robot's names and options stay as in its file
    terrain = options.terrain
    attach_scene(rspec, flat_scene() if terrain is None else terrain_scene(terrain, options.floor_window))
    sensors = add_task_sensing(rspec, m0, names.bodies, robot.base_body, feet, contacts, geom_name)
    try:
        model = rspec.compile()
    except Exception as e:
        raise UserError(f"robot spec '{robot.name}': the scene with {robot.mjcf} does not compile: "
                        f"{one_line(e)}") from None
    if options.discard_visual:
        model = physics_only(rspec, model)
    return _resolved(robot, model, base_joint, plan, act, feet, contacts, sensors,
                     tuple(tuple(geom_name[g] for g in gs) for gs in feet.geoms))


def _file_names(m0: mujoco.MjModel) -> _FileNames:
    def names(objtype: mujoco.mjtObj, count: int) -> list[str]:
        return [mujoco.mj_id2name(m0, objtype, i) or "" for i in range(count)]

    return _FileNames(names(mujoco.mjtObj.mjOBJ_BODY, m0.nbody), names(mujoco.mjtObj.mjOBJ_JOINT, m0.njnt),
                      names(mujoco.mjtObj.mjOBJ_GEOM, m0.ngeom))


def _base_joint(robot: RobotSpec, rspec: mujoco.MjSpec, m0: mujoco.MjModel, names: _FileNames) -> str:
    """The name of the base body's free joint (an unnamed one is named ``root`` in ``rspec``: exported scenes
    look the base joint up by name); one-line errors."""
    bodies, free_type = names.bodies, mujoco.mjtJoint.mjJNT_FREE
    if robot.base_body not in bodies:
        raise spec_error(robot.name, "base_body", f"no body named {robot.base_body!r}", bodies[1:], "bodies")
    base_id = bodies.index(robot.base_body)
    free = [j for j in range(m0.njnt) if m0.jnt_bodyid[j] == base_id and m0.jnt_type[j] == free_type]
    if not free:
        with_free = [bodies[m0.jnt_bodyid[j]] for j in range(m0.njnt) if m0.jnt_type[j] == free_type]
        raise spec_error(robot.name, "base_body", f"body {robot.base_body!r} has no free joint (a floating base "
                         "needs one)", with_free, "bodies with a free joint")
    if not names.joints[free[0]]:
        {j.id: j for j in rspec.joints}[free[0]].name = "root"
    return names.joints[free[0]] or "root"


def _strip_file_extras(rspec: mujoco.MjSpec) -> None:
    """Drop the file's sensors and keyframes: the task adds its own sensors, and keyframes would not fit the new
    actuators."""
    for s in list(rspec.sensors):
        rspec.delete(s)
    for k in list(rspec.keys):
        rspec.delete(k)


def _apply_options(robot: RobotSpec, rspec: mujoco.MjSpec, options: SceneOptions) -> None:
    sim = robot.sim
    if sim.timestep is not None:
        rspec.option.timestep = step_for(sim.timestep, sim.substeps, options.decimation)
    if sim.solver is not None:
        rspec.option.solver = SOLVERS[sim.solver]
    if sim.cone is not None:
        rspec.option.cone = _CONE[sim.cone]
    if sim.impratio is not None:
        rspec.option.impratio = sim.impratio
    if sim.integrator is not None:
        rspec.option.integrator = INTEGRATORS[sim.integrator]
    iterations = options.solver_iterations if options.solver_iterations is not None else sim.iterations
    if iterations is not None:
        rspec.option.iterations = iterations
    ls = options.ls_iterations if options.ls_iterations is not None else sim.ls_iterations
    if ls is not None:
        rspec.option.ls_iterations = ls


def step_for(timestep: float, substeps: int | None, decimation: int | None) -> float:
    """The physics step of a robot whose spec sets ``timestep`` (and ``substeps`` per control step) when the task
    runs ``decimation`` substeps: the spec's control step (``timestep * substeps``) divided among them, so a
    checkpoint written when the spec had another step (``env.decimation=4`` of a 4 x 0.005 s run) or a command line
    with more substeps keeps the control rate; the spec's ``timestep`` itself without ``substeps`` or
    ``decimation``, or when they agree."""
    if substeps is None or decimation is None or decimation == substeps:
        return timestep
    return timestep * substeps / decimation


def _foot_condim(robot: RobotSpec, rspec: mujoco.MjSpec, feet: Feet) -> None:
    """``sim.foot_condim`` on every foot geom (the file's own value when None)."""
    if robot.sim.foot_condim is None:
        return
    by_id = {g.id: g for g in rspec.geoms}
    for gs in feet.geoms:
        for g in gs:
            by_id[g].condim = robot.sim.foot_condim


def _adr(model: mujoco.MjModel, sensors: tuple[str, ...], first: int = 0, count: int = 1) -> tuple[int, ...]:
    """sensordata addresses of values ``first .. first + count - 1`` of each sensor, sensor-major."""
    return tuple(int(model.sensor_adr[model.sensor(s).id]) + k for s in sensors for k in range(first, first + count))


def _resolved(robot: RobotSpec, model: mujoco.MjModel, base_joint: str, plan: JointPlan, act: Actuation,
              feet: Feet, contacts: ContactGeoms, sensors: TaskSensors,
              foot_geom_names: tuple[tuple[str, ...], ...]) -> ResolvedRobot:
    """Every index the task needs, read from the compiled scene by name."""
    jnt = [model.joint(j) for j in plan.trained]
    held = [model.joint(j) for j in plan.held]
    base = model.joint(base_joint)
    return ResolvedRobot(
        spec=robot, model=model, joint_names=plan.trained,
        joint_qpos_adr=tuple(int(j.qposadr[0]) for j in jnt), joint_dof_adr=tuple(int(j.dofadr[0]) for j in jnt),
        ctrl_from_policy=act.ctrl_source, default_joint_pos=plan.default_pose, kp=act.kp, kd=act.kd,
        effort_limit=act.effort_limit, action_scale=act.action_scale, velocity_limit=act.velocity_limit,
        held_joint_names=plan.held, held_qpos_adr=tuple(int(j.qposadr[0]) for j in held),
        held_joint_pos=plan.held_pose, welded_joint_names=plan.welded, base_body_id=model.body(robot.base_body).id,
        base_joint=base_joint, base_qpos_adr=int(base.qposadr[0]), base_dof_adr=int(base.dofadr[0]),
        mass_body_id=model.body(robot.mass_body_name).id, foot_names=feet.names,
        foot_touch_adr=_adr(model, sensors.touch), foot_pos_adr=_adr(model, sensors.pos, 0, 3),
        foot_vel_adr=_adr(model, sensors.vel, 0, 3), termination_sensors=sensors.termination,
        termination_force_adr=_adr(model, sensors.termination, 1), penalized_bodies=contacts.penalized_bodies,
        penalized_force_adr=_adr(model, sensors.penalized, 1), penalized_body_of=contacts.penalized_body_of,
        camera=sensors.camera,
        foot_geom_ids=tuple(tuple(int(model.geom(g).id) for g in gs) for gs in foot_geom_names))
