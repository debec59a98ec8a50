"""Put a robot (``RobotSpec``) and a scene together with ``mujoco.MjSpec``, add what the task senses, compile.

Steps, all by name: check the spec's own values (``envs/robots/checks.py``); load the robot's MJCF unmodified;
check every name of the spec against it, and that every non-free joint is trained, held or welded at a pose
inside its range (``joints.py``); replace its actuators by position servos on the trained and held joints, with
the groups' armature, damping and friction loss written onto the joints (or keep its own position actuators,
``actuators="file"``; ``actuators.py``); remove the welded joints; drop its sensors and keyframes (the task adds its own sensors, and keyframes would not fit the new actuators);
apply the simulation overrides and the collision simplification; attach the scene (``envs/scenes/flat.py``:
floor, light, textures) into the robot's spec, so the robot keeps its file's names and options; add on the
robot, never in its file: a touch site (``feet.py``), touch sensor and position / velocity sensors per foot, a
contact sensor
(collision geom vs floor, so self-collisions never count) per termination / penalized collision geom, and a
tracking camera. Any problem is a one-line ``UserError`` naming the spec field and listing what the model has.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from envs.robots.checks import check_collisions, check_spec
from envs.robots.names import match_each, spec_error
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.scenes.actuators import actuate
from envs.scenes.feet import add_foot_site, resolve_feet
from envs.scenes.joints import plan_joints, weld
from envs.scenes.flat import FLOOR, attach_scene, flat_scene, SCENE_PREFIX
from envs.scenes.terrain import terrain_scene
from envs.terrain.generator import Terrain
from rl_core.errors import UserError

PREFIX = "task_"
"""Names of the sites, sensors and camera added here start with this."""
CONTACT_DATA = 3  # found (1) | force (2): [found, normal force, tangential force x2]
CONTACT_REDUCE_MAXFORCE = 2
_CONE = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}


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


def _names(model: mujoco.MjModel, objtype: mujoco.mjtObj, count: int) -> list[str]:
    return [mujoco.mj_id2name(model, objtype, i) or "" for i in range(count)]


def _collides(model: mujoco.MjModel, g: int) -> bool:
    return bool(model.geom_contype[g] or model.geom_conaffinity[g])


def build(robot: RobotSpec, collisions: str = "full", solver_iterations: int | None = None,
          ls_iterations: int | None = None, terrain: Terrain | None = None,
          floor_window: tuple[float, float, float] | None = None) -> ResolvedRobot:
    """The compiled scene with ``robot`` attached, and every index the task needs (see module docstring);
    ``terrain``: a generated terrain as the floor (``envs/scenes/terrain.py``) instead of the plane;
    ``floor_window`` (x, y, half): only its part around (x, y) (for rendering)."""
    check_spec(robot)
    check_collisions(robot, collisions)
    rspec, m0 = load_robot_spec(robot)
    name = robot.name
    bodies = _names(m0, mujoco.mjtObj.mjOBJ_BODY, m0.nbody)
    joints = _names(m0, mujoco.mjtObj.mjOBJ_JOINT, m0.njnt)
    geoms = _names(m0, mujoco.mjtObj.mjOBJ_GEOM, m0.ngeom)

    # ---- base: a body with a free joint
    if robot.base_body not in bodies:
        raise spec_error(name, "base_body", f"no body named {robot.base_body!r}", bodies[1:], "bodies")
    base_id = bodies.index(robot.base_body)
    free = [j for j in range(m0.njnt) if m0.jnt_bodyid[j] == base_id and m0.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    if not free:
        with_free = [bodies[m0.jnt_bodyid[j]] for j in range(m0.njnt) if m0.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        raise spec_error(name, "base_body", f"body {robot.base_body!r} has no free joint (a floating base needs one)",
                         with_free, "bodies with a free joint")
    if not joints[free[0]]:
        {j.id: j for j in rspec.joints}[free[0]].name = "root"  # exported scenes look the base joint up by name
    base_joint = joints[free[0]] or "root"

    # ---- every non-free joint trained, held or welded; poses inside the joints' ranges
    plan = plan_joints(robot, m0, joints)
    picked, pose = list(plan.trained), list(plan.default_pose)

    # ---- feet and contact bodies
    visual = [g for g in range(m0.ngeom) if int(m0.geom_group[g]) in robot.visual_groups]
    colliding = [g for g in range(m0.ngeom) if _collides(m0, g) and m0.geom_bodyid[g] != 0 and g not in visual]
    feet = resolve_feet(robot, m0, bodies, geoms, colliding)
    foot_geoms = sorted(feet.all_geoms)
    foot_names = list(feet.names)

    def contact_geoms(field: str, patterns: tuple[str, ...]) -> tuple[list[int], list[int], list[str]]:
        body_ids = match_each(name, field, patterns, bodies, "bodies")
        geoms_of, body_of = [], []
        for k, b in enumerate(body_ids):
            for g in colliding:
                if m0.geom_bodyid[g] == b and g not in foot_geoms:
                    geoms_of.append(g)
                    body_of.append(k)
        return geoms_of, body_of, [bodies[b] for b in body_ids]

    term_geoms, _, _ = contact_geoms("termination_contacts", robot.termination_contacts)
    pen_geoms, pen_body_of, pen_bodies = contact_geoms("penalized_contacts", robot.penalized_contacts)
    if robot.mass_body_name not in bodies:
        raise spec_error(name, "mass_body", f"no body named {robot.mass_body_name!r}", bodies[1:], "bodies")

    # ---- actuators (and the groups' joint properties), then the welded joints removed
    act = actuate(robot, rspec, m0, plan, joints)
    weld(rspec, m0, plan, joints)

    # ---- everything in the robot spec that the scene replaces
    for s in list(rspec.sensors):
        rspec.delete(s)
    for k in list(rspec.keys):
        rspec.delete(k)
    _apply_options(robot, rspec, solver_iterations, ls_iterations)
    # unnamed geoms the sensors refer to get a name (spec elements carry their compiled id after m0's compile)
    spec_geoms = {g.id: g for g in rspec.geoms}
    for g in set(term_geoms + pen_geoms + foot_geoms):
        if not spec_geoms[g].name:
            spec_geoms[g].name = f"{bodies[m0.geom_bodyid[g]]}_geom{g}"
    geom_name = {g: spec_geoms[g].name for g in set(term_geoms + pen_geoms + foot_geoms)}
    for g in visual:  # visual only: never collides
        spec_geoms[g].contype = 0
        spec_geoms[g].conaffinity = 0
    if collisions == "feet":  # only the feet touch anything
        for g in colliding:
            if g not in foot_geoms:
                spec_geoms[g].contype = 0
                spec_geoms[g].conaffinity = 0

    # ---- attach the scene (its names get SCENE_PREFIX; the robot's names and options stay as in its file)
    scene = rspec
    attach_scene(scene, flat_scene() if terrain is None else terrain_scene(terrain, floor_window))

    # ---- task sensing, added programmatically
    for f, gs, b in zip(foot_names, feet.geoms, feet.bodies):
        site = add_foot_site(scene, m0, gs, bodies[b], f"{PREFIX}{f}_foot")
        scene.add_sensor(name=f"{PREFIX}{f}_touch", type=mujoco.mjtSensor.mjSENS_TOUCH,
                         objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site)
    for g in term_geoms + pen_geoms:
        if scene.sensor(f"{PREFIX}{geom_name[g]}_contact") is None:
            scene.add_sensor(name=f"{PREFIX}{geom_name[g]}_contact", type=mujoco.mjtSensor.mjSENS_CONTACT,
                             objtype=mujoco.mjtObj.mjOBJ_GEOM, objname=geom_name[g], reftype=mujoco.mjtObj.mjOBJ_GEOM,
                             refname=SCENE_PREFIX + FLOOR, intprm=[CONTACT_DATA, CONTACT_REDUCE_MAXFORCE, 1])
    for kind, sensor in (("pos", mujoco.mjtSensor.mjSENS_FRAMEPOS), ("vel", mujoco.mjtSensor.mjSENS_FRAMELINVEL)):
        for f in foot_names:
            scene.add_sensor(name=f"{PREFIX}{f}_{kind}", type=sensor, objtype=mujoco.mjtObj.mjOBJ_SITE,
                             objname=f"{PREFIX}{f}_foot")
    camera = f"{PREFIX}track"
    cam = scene.body(robot.base_body).add_camera(name=camera, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                                                pos=[0, -1.6, 0.5])
    cam.alt.type = mujoco.mjtOrientation.mjORIENTATION_XYAXES
    cam.alt.xyaxes = [1, 0, 0, 0, 0.3, 1]
    try:
        model = scene.compile()
    except Exception as e:
        raise UserError(f"robot spec '{name}': the scene with {robot.mjcf} does not compile: {one_line(e)}") from None

    def adr(sensor: str, offset: int = 0) -> int:
        return int(model.sensor_adr[model.sensor(sensor).id]) + offset

    jnt = [model.joint(j) for j in picked]
    held = [model.joint(j) for j in plan.held]
    base = model.joint(base_joint)
    term_names = tuple(f"{PREFIX}{geom_name[g]}_contact" for g in term_geoms)
    return ResolvedRobot(
        spec=robot, model=model, collisions=collisions, joint_names=tuple(picked),
        joint_qpos_adr=tuple(int(j.qposadr[0]) for j in jnt), joint_dof_adr=tuple(int(j.dofadr[0]) for j in jnt),
        ctrl_from_policy=act.ctrl_source, default_joint_pos=tuple(pose), kp=act.kp, kd=act.kd,
        effort_limit=act.effort_limit, action_scale=act.action_scale, velocity_limit=act.velocity_limit,
        held_joint_names=plan.held, held_qpos_adr=tuple(int(j.qposadr[0]) for j in held),
        held_joint_pos=plan.held_pose, welded_joint_names=plan.welded, base_body_id=model.body(robot.base_body).id, base_joint=base_joint,
        base_qpos_adr=int(base.qposadr[0]), base_dof_adr=int(base.dofadr[0]),
        mass_body_id=model.body(robot.mass_body_name).id, foot_names=tuple(foot_names),
        foot_touch_adr=tuple(adr(f"{PREFIX}{f}_touch") for f in foot_names),
        foot_pos_adr=tuple(adr(f"{PREFIX}{f}_pos", k) for f in foot_names for k in range(3)),
        foot_vel_adr=tuple(adr(f"{PREFIX}{f}_vel", k) for f in foot_names for k in range(3)),
        termination_sensors=term_names, termination_force_adr=tuple(adr(s, 1) for s in term_names),
        penalized_bodies=tuple(pen_bodies),
        penalized_force_adr=tuple(adr(f"{PREFIX}{geom_name[g]}_contact", 1) for g in pen_geoms),
        penalized_body_of=tuple(pen_body_of), camera=camera)


def _apply_options(robot: RobotSpec, rspec: mujoco.MjSpec, solver_iterations: int | None,
                   ls_iterations: int | None) -> None:
    sim = robot.sim
    if sim.timestep is not None:
        rspec.option.timestep = sim.timestep
    if sim.cone is not None:
        rspec.option.cone = _CONE[sim.cone]
    if sim.impratio is not None:
        rspec.option.impratio = sim.impratio
    iterations = solver_iterations if solver_iterations is not None else sim.iterations
    if iterations is not None:
        rspec.option.iterations = iterations
    ls = ls_iterations if ls_iterations is not None else sim.ls_iterations
    if ls is not None:
        rspec.option.ls_iterations = ls
