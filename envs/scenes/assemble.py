"""Put a robot (``RobotSpec``) and a scene together with ``mujoco.MjSpec``, add what the task senses, compile.

Steps, all by name: load the robot's MJCF unmodified; check every name of the spec against it; replace its
actuators by position servos on the named joints (or keep its own position actuators, ``actuators="file"``);
drop its sensors and keyframes (the task adds its own sensors, and keyframes would not fit the new actuators);
apply the simulation overrides and the collision simplification; attach the scene (``envs/scenes/flat.py``:
floor, light, textures) into the robot's spec, so the robot keeps its file's names and options; add on the
robot, never in its file: a touch site, touch sensor and position / velocity sensors per foot, a contact sensor
(collision geom vs floor, so self-collisions never count) per termination / penalized collision geom, and a
tracking camera. Any problem is a one-line ``UserError`` naming the spec field and listing what the model has.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np

from envs.robots.names import assign, match_each, spec_error
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import FILE_ACTUATORS, RobotSpec
from envs.scenes.flat import FLOOR, attach_scene, flat_scene, SCENE_PREFIX
from envs.scenes.terrain import terrain_scene
from envs.terrain.generator import Terrain
from rl_core.errors import UserError

FOOT_SITE_MARGIN = 0.012
"""The touch site of a foot is its collision geom grown by this (m): contacts on the geom's surface lie inside."""
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

    # ---- actuated joints (hinge / slide), in pattern order
    hinge_or_slide = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    movable = [j for j in range(m0.njnt) if int(m0.jnt_type[j]) in hinge_or_slide]
    movable_names = [joints[j] for j in movable]
    picked = [movable_names[i] for i in match_each(name, "joints", robot.joints, movable_names, "hinge/slide joints")]
    pose_keys = [k for k, _ in robot.default_pose]
    pose = [robot.default_pose[k][1] for k in assign(name, "default_pose", pose_keys, picked, "actuated joints")]

    # ---- feet and contact bodies
    visual = [g for g in range(m0.ngeom) if int(m0.geom_group[g]) in robot.visual_groups]
    colliding = [g for g in range(m0.ngeom) if _collides(m0, g) and m0.geom_bodyid[g] != 0 and g not in visual]
    if bool(robot.foot_geoms) == bool(robot.foot_bodies):
        raise UserError(f"robot spec '{name}' field foot_geoms / foot_bodies: give exactly one of them")
    if robot.foot_geoms:
        named = [g for g in colliding if geoms[g]]
        foot_geoms = [named[i] for i in match_each(name, "foot_geoms", robot.foot_geoms, [geoms[g] for g in named],
                                                   "named collision geoms")]
        foot_names = [geoms[g] for g in foot_geoms]
    else:
        foot_ids = match_each(name, "foot_bodies", robot.foot_bodies, bodies, "bodies")
        foot_geoms = []
        for b in foot_ids:
            own = [g for g in colliding if m0.geom_bodyid[g] == b]
            if len(own) != 1:
                raise spec_error(name, "foot_bodies", f"body {bodies[b]!r} has {len(own)} collision geoms, expected 1",
                                 [bodies[m0.geom_bodyid[g]] for g in colliding], "bodies of collision geoms")
            foot_geoms.append(own[0])
        foot_names = [bodies[b] for b in foot_ids]

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

    # ---- actuators
    kp, kd, effort, ctrl_from_policy = _actuators(robot, rspec, m0, picked, joints)

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
    for f, g in zip(foot_names, foot_geoms):
        site = _site_around(scene, m0, g, bodies[m0.geom_bodyid[g]], f"{PREFIX}{f}_foot")
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
    base = model.joint(base_joint)
    term_names = tuple(f"{PREFIX}{geom_name[g]}_contact" for g in term_geoms)
    return ResolvedRobot(
        spec=robot, model=model, collisions=collisions, joint_names=tuple(picked),
        joint_qpos_adr=tuple(int(j.qposadr[0]) for j in jnt), joint_dof_adr=tuple(int(j.dofadr[0]) for j in jnt),
        ctrl_from_policy=tuple(ctrl_from_policy), default_joint_pos=tuple(pose), kp=tuple(kp), kd=tuple(kd),
        effort_limit=tuple(effort), base_body_id=model.body(robot.base_body).id, base_joint=base_joint,
        base_qpos_adr=int(base.qposadr[0]), base_dof_adr=int(base.dofadr[0]),
        mass_body_id=model.body(robot.mass_body_name).id, foot_names=tuple(foot_names),
        foot_touch_adr=tuple(adr(f"{PREFIX}{f}_touch") for f in foot_names),
        foot_pos_adr=tuple(adr(f"{PREFIX}{f}_pos", k) for f in foot_names for k in range(3)),
        foot_vel_adr=tuple(adr(f"{PREFIX}{f}_vel", k) for f in foot_names for k in range(3)),
        termination_sensors=term_names, termination_force_adr=tuple(adr(s, 1) for s in term_names),
        penalized_bodies=tuple(pen_bodies),
        penalized_force_adr=tuple(adr(f"{PREFIX}{geom_name[g]}_contact", 1) for g in pen_geoms),
        penalized_body_of=tuple(pen_body_of), camera=camera)


def _site_around(scene: mujoco.MjSpec, m0: mujoco.MjModel, g: int, body: str, site: str) -> str:
    """A site of the geom's shape grown by FOOT_SITE_MARGIN, at the geom's pose (a sphere for other shapes)."""
    t = int(m0.geom_type[g])
    size = np.array(m0.geom_size[g], dtype=float)
    shapes = {int(mujoco.mjtGeom.mjGEOM_SPHERE): 1, int(mujoco.mjtGeom.mjGEOM_CAPSULE): 1,
              int(mujoco.mjtGeom.mjGEOM_CYLINDER): 1, int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): 3,
              int(mujoco.mjtGeom.mjGEOM_BOX): 3}
    if t in shapes:
        size[:shapes[t]] += FOOT_SITE_MARGIN
    else:
        t, size = int(mujoco.mjtGeom.mjGEOM_SPHERE), np.array([m0.geom_rbound[g] + FOOT_SITE_MARGIN, 0.0, 0.0])
    scene.body(body).add_site(name=site, type=mujoco.mjtGeom(t), size=size.tolist(),
                              pos=m0.geom_pos[g].tolist(), quat=m0.geom_quat[g].tolist(), group=4,
                              rgba=[1, 0, 0, 0.2])
    return site


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


def _actuators(robot: RobotSpec, rspec: mujoco.MjSpec, m0: mujoco.MjModel, picked: list[str],
               joints: list[str]) -> tuple[list[float], list[float], list[float], list[int]]:
    """Position servos in policy order (or the file's, checked); returns kp, kd, effort limits, ctrl order."""
    name = robot.name
    if robot.actuators == FILE_ACTUATORS:
        by_joint: dict[str, list[int]] = {}
        for a in range(m0.nu):
            if m0.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT:
                by_joint.setdefault(joints[m0.actuator_trnid[a, 0]], []).append(a)
        kp, kd, effort, order = [], [], [], [-1] * m0.nu
        for i, j in enumerate(picked):
            acts = by_joint.get(j, [])
            ok = len(acts) == 1 and m0.actuator_biastype[acts[0]] == mujoco.mjtBias.mjBIAS_AFFINE and math.isclose(
                m0.actuator_biasprm[acts[0], 1], -m0.actuator_gainprm[acts[0], 0])
            if not ok:
                have = [f"{mujoco.mj_id2name(m0, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or a}->{joints[m0.actuator_trnid[a, 0]]}"
                        for a in range(m0.nu)]
                raise spec_error(name, "actuators", f"'file' needs one position actuator on joint {j!r}", have,
                                 "actuators")
            a = acts[0]
            order[a] = i
            kp.append(float(m0.actuator_gainprm[a, 0]))
            kd.append(float(-m0.actuator_biasprm[a, 2]))
            lim = m0.actuator_forcerange[a] if m0.actuator_forcelimited[a] else (-math.inf, math.inf)
            effort.append(float(max(abs(lim[0]), abs(lim[1]))))
        if -1 in order:
            extra = [mujoco.mj_id2name(m0, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or str(a) for a in range(m0.nu) if order[a] < 0]
            raise spec_error(name, "actuators", f"'file': actuators {', '.join(extra)} drive no actuated joint",
                             picked, "actuated joints")
        return kp, kd, effort, order
    groups = robot.actuators
    assert not isinstance(groups, str)  # FILE_ACTUATORS returned above
    group_of = assign(name, "actuators", [g.joints for g in groups], picked, "actuated joints")
    for a in list(rspec.actuators):
        rspec.delete(a)
    for j, k in zip(picked, group_of):
        g = groups[k]
        act = rspec.add_actuator(name=j, target=j, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = g.kp
        act.biasprm[0:3] = [0.0, -g.kp, -g.kd]
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-g.effort_limit, g.effort_limit]
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
    return ([groups[k].kp for k in group_of], [groups[k].kd for k in group_of],
            [groups[k].effort_limit for k in group_of], list(range(len(picked))))
