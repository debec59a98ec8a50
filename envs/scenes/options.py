"""``SceneOptions``: how ``envs/scenes/assemble.build`` puts a robot into a scene, apart from the robot itself.

A task config gives its own (``LocomotionEnvConfig.scene_options``, ``TrackEnvConfig.scene_options``); the
defaults are the plain scene: every collision, the robot's solver settings, a flat floor, drawable.
"""

from __future__ import annotations

from dataclasses import dataclass

from envs.terrain.generator import Terrain


@dataclass(frozen=True, eq=False)
class SceneOptions:
    """How a scene is built (``envs/scenes/assemble.build``)."""

    collisions: str = "full"
    """Which robot geoms collide with the floor: full (every collision geom) or feet (only the feet;
    ``envs/scenes/contacts.py``); ``build`` stops with one line on any other value."""
    solver_iterations: int | None = None
    """Constraint-solver iterations per substep; None: the robot's (``SimOverrides.iterations``, else its file's)."""
    ls_iterations: int | None = None
    """Line-search iterations per solver iteration; None: the robot's (``SimOverrides.ls_iterations``, else its
    file's)."""
    terrain: Terrain | None = None
    """A generated terrain as the floor (``envs/scenes/terrain.py``); None: the plane (``envs/scenes/flat.py``)."""
    floor_window: tuple[float, float, float] | None = None
    """With ``terrain``: only its part within ``half`` metres of (x, y), as (x, y, half) (for rendering); None:
    all of it."""
    discard_visual: bool = False
    """The scene an exported policy carries, without what only drawing uses (``envs/scenes/physics_only.py``)."""
    decimation: int | None = None
    """The task's physics steps per control step (``env.decimation``): a robot whose spec sets ``sim.timestep`` and
    ``sim.substeps`` keeps that control step, divided among these (``assemble.step_for``); None: the spec's step."""


PLAIN = SceneOptions()
"""The plain scene: ``SceneOptions``' defaults."""
