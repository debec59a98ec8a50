"""A video's drawing chosen by its frame's cost (``apps/render_cost.py``): timed with a stand-in clock (no GL)."""

from __future__ import annotations

import itertools

import mujoco
import numpy as np
import pytest

from apps.render_cost import LIGHT_OFF, choose, mesh_faces

XML = """<mujoco><asset><mesh name="tri" vertex="0 0 0  1 0 0  0 1 0  0 0 1"/></asset>
<worldbody><geom type="plane" size="1 1 .1"/><body><freejoint/><geom type="mesh" mesh="tri"/>
<geom type="mesh" mesh="tri" pos="1 0 0"/></body></worldbody></mujoco>"""


def scene_and_model() -> tuple[mujoco.MjvScene, mujoco.MjModel]:
    model = mujoco.MjModel.from_xml_string(XML)
    return mujoco.MjvScene(model, maxgeom=20), model


def ticking(step_s: float):
    """A clock that advances ``step_s`` at every reading."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


def flags_on(scene: mujoco.MjvScene) -> list[bool]:
    return [bool(scene.flags[f]) for f in LIGHT_OFF]


def test_auto_over_budget_draws_light_and_says_so():
    scene, model = scene_and_model()
    draws = []
    choice = choose("auto", model, scene, lambda: draws.append(flags_on(scene)), budget_s=0.25,
                    clock=ticking(0.6))
    assert choice.light and flags_on(scene) == [False] * len(LIGHT_OFF)
    assert draws[:2] == [[True] * len(LIGHT_OFF)] * 2  # timed full first (one untimed, one timed frame)
    assert draws[2:] == [[False] * len(LIGHT_OFF)] * 2  # then light
    assert "0.60 s" in choice.line and "--video-quality full" in choice.line
    assert f"{mesh_faces(model):,} mesh triangles" in choice.line


def test_auto_within_budget_stays_full_silently():
    scene, model = scene_and_model()
    choice = choose("auto", model, scene, lambda: None, budget_s=0.25, clock=ticking(0.1))
    assert not choice.light and choice.line == ""
    assert flags_on(scene) == [True] * len(LIGHT_OFF)


@pytest.mark.parametrize("quality, light", [("full", False), ("light", True)])
def test_fixed_quality_never_times(quality, light):
    scene, model = scene_and_model()
    draws = []
    choice = choose(quality, model, scene, lambda: draws.append(1))
    assert draws == [] and choice.light is light and choice.line == ""
    assert flags_on(scene) == [not light] * len(LIGHT_OFF)


def test_unknown_quality_is_refused_by_name():
    scene, model = scene_and_model()
    with pytest.raises(ValueError, match="quality='fast'; expected one of auto, full, light"):
        choose("fast", model, scene, lambda: None)


def test_mesh_faces_counts_each_geom():
    _, model = scene_and_model()
    assert model.mesh_facenum[0] > 0
    assert mesh_faces(model) == 2 * int(model.mesh_facenum[0])
    assert np.all(model.geom_dataid[model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE] == -1)
