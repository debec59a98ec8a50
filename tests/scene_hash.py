"""SHA-256 of assembled scenes: ``mujoco.mj_saveModel`` bytes and every other field of the ``ResolvedRobot``.

Run it on two checkouts to show that a change to the assembly (``envs/scenes``, ``envs/robots``) left every
compiled model byte-identical:

    PYTHONPATH=/path/to/checkout python tests/scene_hash.py

The script imports the project (and ``tests/robot_models.py``) from PYTHONPATH, so this file can hash an older
checkout that lacks it.

Cases: the built-in quadruped (full and feet-only collisions, solver overrides), the built-in humanoid, the
quadruped on the generated rough terrain (whole and a render window), and the Menagerie-style test robots of
``tests/robot_models.py`` (file actuators, multi-geom feet, held and welded joints). One line per case, then the
hash of all of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np


def _digest(rb: object) -> str:
    model = rb.model  # type: ignore[attr-defined]
    buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    h = hashlib.sha256(buffer.tobytes())
    for field in dataclasses.fields(rb):  # type: ignore[arg-type]
        if field.name not in ("model", "spec", "collisions"):  # collisions: a field of older checkouts
            h.update(f"{field.name}={getattr(rb, field.name)!r};".encode())
    return h.hexdigest()


def _cases(tmp: Path) -> dict[str, Callable[[], object]]:
    from envs.robots.humanoid import HUMANOID
    from envs.robots.quadruped import QUADRUPED
    from envs.robots.spec import FILE_ACTUATORS, ActuatorGroup, HeldJoints, RobotSpec, SimOverrides, WeldedJoints
    from envs.scenes.assemble import build
    from envs.terrain.config import TerrainConfig
    from envs.terrain.generator import generate
    from tests.robot_models import humanoid_xml, quadruped_xml, write

    anyq = RobotSpec(
        name="anyq", mjcf=write(tmp, "anyq.xml", quadruped_xml()), base_body="base",
        joints=("LF_.*", "RF_.*", "LH_.*", "RH_.*"), default_pose={".*_HAA": 0.0, ".*_HFE": 0.6, ".*_KFE": -1.2},
        actuators=FILE_ACTUATORS, action_scale=0.25, base_height=0.46, foot_bodies=("(LF|RF|LH|RH)_SHANK",),
        termination_contacts=("base",), penalized_contacts=(".*_THIGH",),
        sim=SimOverrides(cone="pyramidal", impratio=1.0))
    legs = tuple(f"{s}_{j}_joint" for s in ("left", "right") for j in ("hip_pitch", "hip_roll", "knee", "ankle_pitch"))
    arms = r"waist_yaw_joint|.*_(shoulder_pitch|elbow)_joint"
    biped = RobotSpec(
        name="biped", mjcf=write(tmp, "biped.xml", humanoid_xml()), base_body="pelvis", joints=legs,
        default_pose={".*_hip_pitch_joint": -0.2, ".*_hip_roll_joint": 0.0, ".*_knee_joint": 0.4,
                      ".*_ankle_pitch_joint": -0.2},
        actuators=(ActuatorGroup(".*_(hip_.*|knee)_joint", kp=150.0, kd=4.0, effort_limit=150.0, armature=0.02),
                   ActuatorGroup(".*_ankle_pitch_joint", kp=80.0, kd=2.0, effort_limit=50.0, armature=0.01,
                                 action_scale="effort"),
                   ActuatorGroup(arms, kp=100.0, kd=2.0, effort_limit=60.0, armature=0.01, damping=0.5),
                   ActuatorGroup(".*_wrist_joint", kp=5.0, kd=0.1, effort_limit=5.0, armature=0.001)),
        action_scale=0.25, base_height=0.93, foot_bodies=("left_ankle_link", "right_ankle_link"),
        termination_contacts=("pelvis", "torso"), penalized_contacts=(".*_thigh", ".*_shin"),
        held=(HeldJoints(arms, pose={"waist_yaw_joint": 0.0, ".*_shoulder_pitch_joint": 0.2, ".*_elbow_joint": 0.5}),
              HeldJoints(".*_wrist_joint", pose=0.0)))
    welded = dataclasses.replace(biped, actuators=biped.actuators[:3], held=(HeldJoints(arms, pose=0.0),),
                                 welded=(WeldedJoints(".*_wrist_joint", pose={"left_.*": 0.4, "right_.*": -0.3}),))
    file_biped = dataclasses.replace(
        biped, mjcf=write(tmp, "biped_file.xml", humanoid_xml(file_actuators=True)), actuators=FILE_ACTUATORS,
        held=(HeldJoints(arms, pose=0.1),), welded=(WeldedJoints(".*_wrist_joint"),))
    terrain = generate(TerrainConfig(type="generated"))
    return {
        "quadruped full": lambda: build(QUADRUPED),
        "quadruped feet 4/6": lambda: build(QUADRUPED, "feet", 4, 6),
        "humanoid full": lambda: build(HUMANOID),
        "humanoid feet": lambda: build(HUMANOID, "feet"),
        "quadruped rough": lambda: build(QUADRUPED, "full", None, None, terrain),
        "quadruped rough window": lambda: build(QUADRUPED, "feet", None, None, terrain, (3.0, -2.0, 8.0)),
        "anyq file actuators": lambda: build(anyq),
        "anyq feet": lambda: build(anyq, "feet"),
        "biped held": lambda: build(biped),
        "biped welded": lambda: build(welded),
        "biped file actuators": lambda: build(file_biped),
    }


def main() -> None:
    total = hashlib.sha256()
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in _cases(Path(tmp)).items():
            digest = _digest(make())
            total.update(digest.encode())
            print(f"{name:24s} {digest}")
    print(f"{'all':24s} {total.hexdigest()}")


if __name__ == "__main__":
    main()
