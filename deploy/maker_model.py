"""Another model of the robot for the rehearsal (``python -m deploy.rehearse POLICY --model FILE.xml``): the maker's
MJCF (Menagerie's ``go2.xml``, Unitree's own file) instead of the scene the policy file carries.

The file is compiled as it is (its masses, inertias, joint armature and damping, contact solver settings), with what
the rehearsal needs added: a floor plane when the file has none (the stored scene's floor friction), its one free
joint named as the policy's base joint, a motor on each joint the policy drives or holds that has no actuator (the
rehearsal's torque PD drives the joints: ``actuation=torque_pd`` only), and a contact sensor between each body whose
contact ended a training episode and the floor, named as the policy file's. The joints are found by name; one line
names the ones the file lacks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco

from contract.errors import UserError

FLOOR = "rehearsal_floor"
"""The floor plane added to a file without one."""
CONTACT_INTPRM = (3, 2, 1)
"""A contact sensor's data (found | force), reduction (max force), slots: the training scene's
(``envs/scenes/sensing.py``), so ``force`` is the sensor's second value."""


def maker_scene(path: str, meta: dict[str, Any], stored: mujoco.MjModel) -> mujoco.MjModel:
    """The compiled model of ``path`` for the policy of ``meta`` (module docstring); ``stored``: the policy file's
    scene (its floor friction and termination sensors). One-line errors."""
    if not Path(path).is_file():
        raise UserError(f"--model {path}: no such file (an MJCF of the robot, e.g. Menagerie's go2.xml)")
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except ValueError as e:
        raise UserError(f"--model {path}: not a model MuJoCo reads: {' '.join(str(e).split())}") from None
    free = [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]
    if len(free) != 1:
        raise UserError(f"--model {path}: {len(free)} free joints; expected the robot's one floating base")
    free[0].name = meta["base_joint"]
    names = {j.name for j in spec.joints}
    wanted = list(meta["joint_names"]) + list(meta.get("held_joint_names", []))
    missing = [n for n in wanted if n not in names]
    if missing:
        raise UserError(f"--model {path}: no joint(s) {', '.join(missing)} of the policy; the file's joints: "
                        f"{', '.join(sorted(n for n in names if n and n != meta['base_joint']))}")
    driven = {a.target for a in spec.actuators if a.trntype == mujoco.mjtTrn.mjTRN_JOINT}
    for n in wanted:
        if n not in driven:
            spec.add_actuator(name=f"rehearsal_{n}", target=n, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    floor = _floor(spec, stored)
    for sensor in meta["termination_contact_sensors"]:
        s = stored.sensor(sensor)
        body = stored.body(int(stored.geom_bodyid[int(s.objid[0])])).name
        if spec.body(body) is None:
            raise UserError(f"--model {path}: no body {body!r}, whose contact ends the policy's episodes")
        spec.add_sensor(name=sensor, type=mujoco.mjtSensor.mjSENS_CONTACT, objtype=mujoco.mjtObj.mjOBJ_BODY,
                        objname=body, reftype=mujoco.mjtObj.mjOBJ_GEOM, refname=floor, intprm=list(CONTACT_INTPRM))
    try:
        return spec.compile()
    except ValueError as e:
        raise UserError(f"--model {path}: does not compile with the rehearsal's additions: "
                        f"{' '.join(str(e).split())}") from None


def _floor(spec: mujoco.MjSpec, stored: mujoco.MjModel) -> str:
    """The name of the file's floor plane, or of one added with the stored scene's floor friction."""
    for g in spec.worldbody.geoms:
        if g.type == mujoco.mjtGeom.mjGEOM_PLANE:
            if not g.name:
                g.name = FLOOR
            return str(g.name)
    planes = [g for g in range(stored.ngeom) if stored.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE]
    friction = stored.geom_friction[planes[0]].tolist() if planes else [1.0, 0.005, 0.0001]
    spec.worldbody.add_geom(name=FLOOR, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], friction=friction)
    return FLOOR
