"""SHA-256 of assembled scenes: ``mujoco.mj_saveModel`` bytes and every other field of the ``ResolvedRobot``.

Run it on two checkouts to show that a change to the assembly (``envs/scenes``, ``envs/robots``) left every
compiled model byte-identical:

    PYTHONPATH=/path/to/checkout python -m tests.scene_hash

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


def _build(robot: object, **options: object) -> object:
    """``build`` with these scene options: a ``SceneOptions`` (``envs/scenes/options.py``), or keywords on a checkout
    older than it."""
    from envs.scenes.assemble import build

    try:
        from envs.scenes.options import SceneOptions
    except ImportError:
        return build(robot, **options)  # type: ignore[arg-type]
    return build(robot, SceneOptions(**options))  # type: ignore[arg-type]


def _cases(tmp: Path) -> dict[str, Callable[[], object]]:
    from envs.robots.humanoid import HUMANOID
    from envs.robots.quadruped import QUADRUPED
    from envs.robots.spec import FILE_ACTUATORS, HeldJoints, WeldedJoints
    from envs.scenes.assemble import build
    from envs.terrain.config import TerrainConfig
    from envs.terrain.generator import generate
    from tests.envs.robots.test_robot_files import ARMS, _humanoid, _quadruped
    from tests.robot_models import humanoid_xml

    anyq, biped = _quadruped(tmp), _humanoid(tmp)
    groups = biped.actuators
    assert not isinstance(groups, str)
    biped = dataclasses.replace(biped, actuators=(  # also an effort-derived action scale and a joint damping
        groups[0], dataclasses.replace(groups[1], action_scale="effort"),
        dataclasses.replace(groups[2], damping=0.5), groups[3]))
    welded = dataclasses.replace(biped, actuators=biped.actuators[:3], held=(HeldJoints(ARMS, pose=0.0),),
                                 welded=(WeldedJoints(".*_wrist_joint", pose={"left_.*": 0.4, "right_.*": -0.3}),))
    file_biped = _humanoid(tmp, xml=humanoid_xml(file_actuators=True), actuators=FILE_ACTUATORS,
                           held=(HeldJoints(ARMS, pose=0.1),), welded=(WeldedJoints(".*_wrist_joint"),))
    terrain = generate(TerrainConfig(type="generated"))
    return {
        "quadruped full": lambda: build(QUADRUPED),
        "quadruped feet 4/6": lambda: _build(QUADRUPED, collisions="feet", solver_iterations=4, ls_iterations=6),
        "humanoid full": lambda: build(HUMANOID),
        "humanoid feet": lambda: _build(HUMANOID, collisions="feet"),
        "quadruped rough": lambda: _build(QUADRUPED, terrain=terrain),
        "quadruped rough window": lambda: _build(QUADRUPED, collisions="feet", terrain=terrain,
                                                 floor_window=(3.0, -2.0, 8.0)),
        "anyq file actuators": lambda: build(anyq),
        "anyq feet": lambda: _build(anyq, collisions="feet"),
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
