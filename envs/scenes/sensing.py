"""What the task senses, added onto the robot after the scene is attached (never written in a robot file).

Per foot: a touch site (``feet.py``) with a touch sensor, and frame position and linear velocity sensors of that
site. Per termination or penalized collision geom: a contact sensor against the scene's floor (so self-collisions
never count), shared when a geom is both. A camera tracking the base. Every name starts with ``PREFIX``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco

from envs.scenes.contacts import ContactGeoms
from envs.scenes.feet import Feet, add_foot_site
from envs.scenes.flat import FLOOR, SCENE_PREFIX

PREFIX = "task_"
"""Names of the sites, sensors and camera added here start with this."""
CONTACT_DATA = 3  # found (1) | force (2): [found, normal force, tangential force x2]
CONTACT_REDUCE_MAXFORCE = 2


@dataclass(frozen=True)
class TaskSensors:
    """Names of the sensors and camera added to the scene."""

    touch: tuple[str, ...]
    """Touch sensor of each foot (normal force)."""
    pos: tuple[str, ...]
    """World position sensor of each foot's site."""
    vel: tuple[str, ...]
    """World linear velocity sensor of each foot's site."""
    termination: tuple[str, ...]
    """Contact sensor of each termination geom ([found, normal force, tangential force x2])."""
    penalized: tuple[str, ...]
    """Contact sensor of each penalized geom."""
    camera: str
    """The camera that tracks the base."""


def add_task_sensing(scene: mujoco.MjSpec, m0: mujoco.MjModel, bodies: list[str], base_body: str, feet: Feet,
                     contacts: ContactGeoms, geom_name: dict[int, str]) -> TaskSensors:
    """Add the sites, sensors and camera of the module docstring to ``scene`` (robot file compiled on its own:
    ``m0``, its body names ``bodies``)."""
    touch = _add_feet(scene, m0, bodies, feet)
    contact = {g: f"{PREFIX}{geom_name[g]}_contact" for g in contacts.termination + contacts.penalized}
    for g in contacts.termination + contacts.penalized:
        if scene.sensor(contact[g]) is None:
            scene.add_sensor(name=contact[g], type=mujoco.mjtSensor.mjSENS_CONTACT, objtype=mujoco.mjtObj.mjOBJ_GEOM,
                             objname=geom_name[g], reftype=mujoco.mjtObj.mjOBJ_GEOM, refname=SCENE_PREFIX + FLOOR,
                             intprm=[CONTACT_DATA, CONTACT_REDUCE_MAXFORCE, 1])
    frames = {}
    for kind, sensor in (("pos", mujoco.mjtSensor.mjSENS_FRAMEPOS), ("vel", mujoco.mjtSensor.mjSENS_FRAMELINVEL)):
        frames[kind] = tuple(f"{PREFIX}{f}_{kind}" for f in feet.names)
        for f, frame in zip(feet.names, frames[kind], strict=True):
            scene.add_sensor(name=frame, type=sensor, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=f"{PREFIX}{f}_foot")
    return TaskSensors(touch, frames["pos"], frames["vel"], tuple(contact[g] for g in contacts.termination),
                       tuple(contact[g] for g in contacts.penalized), _add_camera(scene, base_body))


def _add_feet(scene: mujoco.MjSpec, m0: mujoco.MjModel, bodies: list[str], feet: Feet) -> tuple[str, ...]:
    """Each foot's touch site and touch sensor; the sensors' names."""
    touch = []
    for f, gs, b in zip(feet.names, feet.geoms, feet.bodies, strict=True):
        site = add_foot_site(scene, m0, gs, bodies[b], f"{PREFIX}{f}_foot")
        touch.append(f"{PREFIX}{f}_touch")
        scene.add_sensor(name=touch[-1], type=mujoco.mjtSensor.mjSENS_TOUCH, objtype=mujoco.mjtObj.mjOBJ_SITE,
                         objname=site)
    return tuple(touch)


def _add_camera(scene: mujoco.MjSpec, base_body: str) -> str:
    """A camera behind the base, tracking its centre of mass; its name."""
    camera = f"{PREFIX}track"
    cam = scene.body(base_body).add_camera(name=camera, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                                           pos=[0, -1.6, 0.5])
    cam.alt.type = mujoco.mjtOrientation.mjORIENTATION_XYAXES
    cam.alt.xyaxes = [1, 0, 0, 0, 0.3, 1]
    return camera
