"""``SceneOptions`` (envs/scenes/options.py): a task config's options reach the compiled scene."""

from __future__ import annotations

import dataclasses

import mujoco
import pytest

from contract.errors import UserError
from envs.robots.quadruped import QUADRUPED
from envs.scenes.assemble import build
from envs.scenes.options import PLAIN, SceneOptions
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.track.config import TrackEnvConfig


def _colliding(model: mujoco.MjModel) -> int:
    return int(((model.geom_contype != 0) | (model.geom_conaffinity != 0)).sum())


def test_a_configs_options_reach_the_scene():
    cfg = LocomotionEnvConfig(collisions="feet", solver_iterations=2, ls_iterations=3)
    options = cfg.scene_options()
    assert (options.collisions, options.solver_iterations, options.ls_iterations) == ("feet", 2, 3)
    assert options.terrain is None and options.floor_window is None and not options.discard_visual
    feet, full = build(QUADRUPED, options).model, build(QUADRUPED).model
    assert (feet.opt.iterations, feet.opt.ls_iterations) == (2, 3)
    assert (full.opt.iterations, full.opt.ls_iterations) != (2, 3)
    assert _colliding(feet) < _colliding(full)
    track = TrackEnvConfig(collisions="feet", solver_iterations=5).scene_options()
    assert (track.collisions, track.solver_iterations, track.ls_iterations) == ("feet", 5, None)


def test_discard_visual_and_a_bad_collisions_value():
    small = build(QUADRUPED, dataclasses.replace(PLAIN, discard_visual=True)).model
    assert small.ngeom < build(QUADRUPED).model.ngeom
    with pytest.raises(UserError, match="env.collisions 'some'"):
        build(QUADRUPED, SceneOptions(collisions="some"))
