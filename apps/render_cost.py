"""What a video frame costs to draw, and the lighter drawing a mesh-heavy robot gets.

On a machine without a GPU, ``MUJOCO_GL=egl`` draws with a software rasterizer, where a frame's cost grows with
the scene's triangles and pixels times the passes that draw them: MuJoCo draws the scene once more for each
light's shadow map and once more mirrored for the reflective floor. Issue 47 measured 0.4 s per frame of
Unitree's G1 (tens of megabytes of visual meshes): minutes for a 10 s video. Shadows, reflections and the skybox
are what a frame can lose at little cost to what it shows (the robot's pose and gait stay drawn in full); without
them one pass draws the frame (``python -m tools.experiments.render_cost`` times both; docs/usage.md "Video").

``auto`` (play.py's default) times one frame of the scene as it will be filmed and draws light when a frame
costs more than ``FRAME_BUDGET_S``; ``full`` and ``light`` choose without timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import mujoco

QUALITIES = ("auto", "full", "light")
"""``--video-quality``'s values."""
FRAME_BUDGET_S = 0.25
"""A frame that costs more than this to draw with shadows and reflections (s) is drawn without them under
``auto``: 500 frames (a 10 s video at 50 frames per second) then cost about two minutes of drawing or less.
On a GPU's renderer a full frame costs milliseconds and stays full."""
LIGHT_OFF = (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION, mujoco.mjtRndFlag.mjRND_SKYBOX)
"""The drawing passes a light frame goes without."""


@dataclass(frozen=True)
class Choice:
    """How a video is drawn, and why."""

    light: bool
    """Shadows, reflections and the skybox off."""
    line: str
    """What to tell the user (empty: nothing worth saying)."""


def set_light(scene: mujoco.MjvScene, light: bool) -> None:
    """Switch ``LIGHT_OFF``'s passes off (``light``) or on in ``scene``."""
    for flag in LIGHT_OFF:
        scene.flags[flag] = 0 if light else 1


def mesh_faces(model: mujoco.MjModel) -> int:
    """Triangles of the visible mesh geoms (each geom counts its mesh once more)."""
    return int(sum(model.mesh_facenum[m] for m in model.geom_dataid[model.geom_type == mujoco.mjtGeom.mjGEOM_MESH]
                   if m >= 0))


def frame_seconds(draw: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds of one call of ``draw`` after a first, untimed one (the first pays for uploading the meshes)."""
    draw()
    start = clock()
    draw()
    return clock() - start


def choose(quality: str, model: mujoco.MjModel, scene: mujoco.MjvScene, draw: Callable[[], object],
           budget_s: float = FRAME_BUDGET_S, clock: Callable[[], float] = time.perf_counter) -> Choice:
    """The drawing for ``quality`` (``QUALITIES``); under ``auto`` ``draw`` (one frame) is timed full, and light
    as well when full is over ``budget_s``. Leaves ``scene``'s flags as chosen."""
    if quality not in QUALITIES:
        raise ValueError(f"quality={quality!r}; expected one of {', '.join(QUALITIES)}")
    set_light(scene, quality == "light")
    if quality != "auto":
        return Choice(quality == "light", "")
    full = frame_seconds(draw, clock)
    if full <= budget_s:
        return Choice(False, "")
    set_light(scene, True)
    light = frame_seconds(draw, clock)
    faces = mesh_faces(model)
    return Choice(True, f"video: a frame costs {full:.2f} s to draw with shadows and reflections ({faces:,} mesh "
                        f"triangles; budget {budget_s:g} s); drawn without them: {light:.2f} s per frame "
                        "(--video-quality full keeps them)")
