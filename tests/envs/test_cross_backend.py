"""Native MuJoCo, MJX and MuJoCo Warp run the same model: identical trajectories without contacts, matching
statistics with them."""

from __future__ import annotations

import pytest
import torch

from envs.physics.native import NativePhysics
from envs.robots.quadruped import QUADRUPED
from envs.scenes.assemble import build
from envs.scenes.options import SceneOptions
from envs.tasks.locomotion import RANDOMIZED_FIELDS

N = 8


@pytest.fixture(scope="module", params=[
    pytest.param(("mjx", "full"), marks=[pytest.mark.mjx, pytest.mark.slow], id="mjx-full"),
    pytest.param(("mjx", "feet"), marks=[pytest.mark.mjx, pytest.mark.slow], id="mjx-feet"),
    pytest.param(("warp", "full"), marks=pytest.mark.warp, id="warp-full"),
    pytest.param(("warp", "feet"), marks=[pytest.mark.warp, pytest.mark.slow], id="warp-feet")])
def pair(request):
    """Native MuJoCo and another backend, on the model with every collision (the default) and with the feet
    only (``env.collisions=feet``; under ``slow``: one more compile per backend for the same checks)."""
    backend, collisions = request.param
    robot = build(QUADRUPED, SceneOptions(collisions))
    model = robot.model
    if backend == "mjx":
        pytest.importorskip("mujoco.mjx")
        from envs.physics.mjx import MjxPhysics as Other
    else:
        pytest.importorskip("mujoco_warp")
        from envs.physics.warp import WarpPhysics as Other
    return robot, NativePhysics(model, N, 4, RANDOMIZED_FIELDS), Other(model, N, 4, RANDOMIZED_FIELDS)


def start(physics, robot, height: float, yaw_seed: int = 0) -> None:
    g = torch.Generator().manual_seed(yaw_seed)
    qpos = torch.zeros(N, 19)
    qpos[:, 2] = height
    yaw = torch.rand(N, generator=g) * 6.0 - 3.0
    qpos[:, 3], qpos[:, 6] = torch.cos(yaw / 2), torch.sin(yaw / 2)
    qpos[:, list(robot.joint_qpos_adr)] = torch.tensor(robot.default_joint_pos)
    qvel = torch.zeros(N, 18)
    qvel[:, 3:6] = torch.randn(N, 3, generator=g) * 0.5  # a slow tumble
    physics.reset(torch.ones(N, dtype=torch.bool), qpos, qvel)


def test_contact_free_trajectories_agree(pair):
    robot, native, mjx = pair
    for p in (native, mjx):
        start(p, robot, height=10.0)  # held high in the air: no contact for the whole test
    g = torch.Generator().manual_seed(1)
    default = torch.tensor(robot.default_joint_pos)
    for _ in range(25):
        ctrl = default + 0.1 * torch.randn(N, 12, generator=g)
        native.step(ctrl)
        mjx.step(ctrl)
        a, b = native.read(), mjx.read()
        # positions relative to the (large) free-fall height keep float32 resolution
        torch.testing.assert_close(b.qpos[:, 3:], a.qpos[:, 3:], atol=1e-5, rtol=0)
        torch.testing.assert_close(b.qpos[:, 2] - 10.0, a.qpos[:, 2] - 10.0, atol=1e-5, rtol=0)
        # joint velocities reach several rad/s: 1e-5 relative is a few float32 roundings
        torch.testing.assert_close(b.qvel, a.qvel, atol=1e-5, rtol=1e-5)
    assert (a.sensordata[:, list(robot.foot_touch_adr)] == 0).all()


def test_standing_with_contacts_matches_statistically(pair):
    robot, native, mjx = pair
    for p in (native, mjx):
        start(p, robot, height=robot.spec.base_height)
    default = torch.tensor(robot.default_joint_pos).expand(N, 12)
    heights = {"native": [], "mjx": []}
    for _ in range(100):  # 2 s: drop, settle, stand
        for name, p in (("native", native), ("mjx", mjx)):
            p.step(default)
            heights[name].append(p.read().qpos[:, 2].clone())
    a, b = native.read(), mjx.read()
    h_native, h_mjx = torch.stack(heights["native"][50:]), torch.stack(heights["mjx"][50:])
    assert abs(h_native.mean() - h_mjx.mean()) < 0.005
    weight = float(robot.model.body_subtreemass[robot.base_body_id]) * 9.81
    feet = list(robot.foot_touch_adr)
    for r in (a, b):
        total = r.sensordata[:, feet].sum(1)
        assert torch.allclose(total, torch.full((N,), weight), rtol=0.05)  # the feet carry the robot
    torch.testing.assert_close(b.sensordata[:, feet].mean(0), a.sensordata[:, feet].mean(0),
                               rtol=0.05, atol=1.0)


@pytest.mark.parametrize("backend,collisions", [
    pytest.param("mjx", "feet", marks=pytest.mark.mjx, id="mjx-feet"),
    pytest.param("warp", "full", marks=[pytest.mark.warp, pytest.mark.slow], id="warp-full")])
def test_standing_on_a_heightfield_slope_matches_native(backend, collisions):
    """Robots on generated terrain (levels x columns not square: a flat and a slope_up column), on the 3-degree
    ramps of the slope tile facing +x, +y and -x and on its platform, two headings: each robot's height above
    the ground and its drift match native MuJoCo's. MJX collides the feet only here (its heightfield collider
    makes the full model about 50 times slower per step; see tests/envs/tasks/test_locomotion_env.py). Warp's row runs
    under
    ``slow``: by default ``tests/envs/test_warp_rough.py`` compares the rough scene on Warp with native MuJoCo."""
    from configs.quadruped import ROUGH_QUADRUPED
    from envs.terrain.config import TILE_TYPES, TerrainConfig, TerrainProportions
    from envs.terrain.generator import generate

    pytest.importorskip("mujoco.mjx" if backend == "mjx" else "mujoco_warp")
    terrain = generate(TerrainConfig(type="generated", levels=2, columns=2, border=2.0, max_init_level=0,
                                     proportions=TerrainProportions(**{t: float(t in ("flat", "slope_up"))
                                                                       for t in TILE_TYPES})))
    assert terrain.column_types == ("flat", "slope_up")
    robot = build(ROUGH_QUADRUPED, SceneOptions(collisions, terrain=terrain))
    if backend == "mjx":
        from envs.physics.mjx import MjxPhysics as Other
    else:
        from envs.physics.warp import WarpPhysics as Other
    cx, cy = (float(v) for v in terrain.origins[1, 1, :2])
    xy = torch.tensor([[cx, cy], [cx + 2.5, cy], [cx, cy + 2.5], [cx - 2.5, cy]] * 2)
    ground = torch.tensor([terrain.height_at(float(x), float(y)) for x, y in xy])
    assert ground[0] < ground[1] - 0.05  # on the ramps, above the platform
    qpos = torch.zeros(N, 19)
    qpos[:, :2], qpos[:, 2] = xy, ground + 0.35
    yaw = torch.tensor([0.0] * 4 + [1.6] * 4)
    qpos[:, 3], qpos[:, 6] = torch.cos(yaw / 2), torch.sin(yaw / 2)
    qpos[:, list(robot.joint_qpos_adr)] = torch.tensor(robot.default_joint_pos)
    ctrl = torch.tensor(robot.default_joint_pos).expand(N, 12)
    heights = {}
    for name, p in (("native", NativePhysics(robot.model, N, 4, RANDOMIZED_FIELDS)),
                    (backend, Other(robot.model, N, 4, RANDOMIZED_FIELDS))):
        p.reset(torch.ones(N, dtype=torch.bool), qpos, torch.zeros(N, 18))
        trace = []
        for _ in range(100):  # 2 s: drop, settle, stand
            p.step(ctrl)
            trace.append(p.read().qpos[:, :3].clone())
        last = torch.stack(trace[50:])
        heights[name] = (last[:, :, 2] - ground).mean(0), last[-1, :, :2] - xy
    (h_native, drift_native), (h_other, drift_other) = heights["native"], heights[backend]
    assert ((h_native > 0.2) & (h_native < 0.3)).all()
    torch.testing.assert_close(h_other, h_native, atol=0.005, rtol=0)
    torch.testing.assert_close(drift_other, drift_native, atol=0.02, rtol=0)
