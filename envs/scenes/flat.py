"""The flat-ground scene, defined apart from any robot: floor plane, light, sky and a visual headlight.

``envs/scenes/assemble.py`` puts a robot and this scene together (``attach_scene``) and adds the task's sensors
and the tracking camera.
"""

from __future__ import annotations

import mujoco

FLOOR = "floor"
"""Name of the floor geom in the scene: the contact sensors count contacts with it (never self-collisions)."""
SCENE_PREFIX = "scene/"
"""Prefix of the scene's names once attached (``scene/floor``): they never clash with a robot's."""
HEADLIGHT = {"ambient": [0.35, 0.35, 0.35], "diffuse": [0.6, 0.6, 0.6], "specular": [0.1, 0.1, 0.1]}
"""The visual headlight of the assembled model."""


def flat_scene() -> mujoco.MjSpec:
    """A fresh MjSpec of the empty world. The floor collides with any geom whose contype is set (contype 0 /
    conaffinity 1), so a robot whose geoms are contype 1 / conaffinity 0 has no self-collisions and one whose
    geoms are 1 / 1 (Menagerie's convention) keeps its own."""
    spec = mujoco.MjSpec()
    spec.modelname = "scene"
    spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
                     rgb1=[0.55, 0.7, 0.9], rgb2=[0.95, 0.95, 1.0], width=64, height=64)
    spec.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D, builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
                     rgb1=[0.45, 0.5, 0.55], rgb2=[0.6, 0.65, 0.7], width=512, height=512)
    material = spec.add_material(name="grid", texrepeat=[1, 1], texuniform=True, reflectance=0.1)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
    spec.worldbody.add_light(name="sun", pos=[0, 0, 4], dir=[0, 0, -1], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    spec.worldbody.add_geom(name=FLOOR, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], material="grid",
                            contype=0, conaffinity=1, condim=3, friction=[1, 0.005, 0.0001])
    return spec


def attach_scene(robot: mujoco.MjSpec, scene: mujoco.MjSpec) -> None:
    """Attach ``scene`` into the robot's spec (names prefixed SCENE_PREFIX): the robot keeps its own names and
    simulation options, and the world gets the scene's floor, light, textures and headlight."""
    robot.attach(scene, prefix=SCENE_PREFIX, frame=robot.worldbody.add_frame())
    for key, value in HEADLIGHT.items():
        setattr(robot.visual.headlight, key, value)
