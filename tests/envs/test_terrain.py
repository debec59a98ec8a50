"""Generated terrain (``envs/terrain``): the height map, the MuJoCo heightfield built from it against the
lookups, the curriculum, the height scan, robots spawned on every tile, time-outs at the map's edge and an
exact checkpoint resume of quadruped-rough (native backend)."""

from __future__ import annotations

import dataclasses
import math

import mujoco
import numpy as np
import pytest
import torch

from configs.catalog import get_task
from envs.scenes.terrain import terrain_scene
from envs.tasks.locomotion import OBS_SCALES, LocomotionEnv
from envs.terrain.config import TILE_TYPES, HeightScanConfig, TerrainConfig, TerrainProportions
from envs.terrain.generator import Terrain, column_types, generate
from envs.terrain.ground import Ground
from rl_core import checkpoint as ckpt
from rl_core.runner import OnPolicyRunner

ROUGH = get_task("quadruped-rough").default_config()
"""quadruped-rough's default training config (its terrain: 10 levels x 10 columns of 8 m tiles)."""
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def terrain() -> Terrain:
    return generate(ROUGH.env.terrain)


def tile(terrain: Terrain, cfg: TerrainConfig, level: int, column: int) -> np.ndarray:
    """The ``[n, n]`` samples of one tile (sample ``n // 2`` is its centre)."""
    h = cfg.horizontal_scale
    n, nb = round(cfg.tile_size / h), round(cfg.border / h)
    return terrain.heights[nb + level * n:nb + (level + 1) * n, nb + column * n:nb + (column + 1) * n]


def ground(terrain: Terrain | None, n: int = 1, cfg: TerrainConfig | None = None,
           scan: HeightScanConfig | None = None) -> Ground:
    cfg = cfg or (TerrainConfig(type="generated") if terrain is not None else TerrainConfig())
    return Ground(cfg, terrain, scan or HeightScanConfig(enabled=True), n, CPU, torch.Generator().manual_seed(0))


def rough_env(num_envs: int, **terrain_fields) -> LocomotionEnv:
    """quadruped-rough for evaluation (no pushes, no random episode starts), native, on the CPU."""
    cfg = ROUGH.env
    cfg = dataclasses.replace(cfg, num_envs=num_envs, backend="native",
                              terrain=dataclasses.replace(cfg.terrain, **terrain_fields)).for_evaluation()
    env = get_task("quadruped-rough").make_env(cfg, CPU)
    assert isinstance(env, LocomotionEnv)
    return env


# ------------------------------------------------------------------------------------------- height map
def test_same_seed_same_map_other_seed_other_map(terrain):
    cfg = ROUGH.env.terrain
    again = generate(cfg)
    assert np.array_equal(again.heights, terrain.heights) and np.array_equal(again.origins, terrain.origins)
    other = generate(dataclasses.replace(cfg, seed=cfg.seed + 1))
    assert not np.array_equal(other.heights, terrain.heights)
    for j, kind in enumerate(terrain.column_types):  # only the random tile types change
        same = all(np.array_equal(tile(other, cfg, i, j), tile(terrain, cfg, i, j)) for i in range(cfg.levels))
        assert same == (kind not in ("rough", "obstacles")), kind


def test_every_tile_edge_at_zero_and_its_platform_flat(terrain):
    cfg = ROUGH.env.terrain
    h = cfg.horizontal_scale
    n = round(cfg.tile_size / h)
    k = np.abs(np.arange(n) - n // 2) * h
    platform = np.maximum(k[:, None], k[None, :]) < cfg.platform / 2
    for i in range(cfg.levels):
        for j, kind in enumerate(terrain.column_types):
            t = tile(terrain, cfg, i, j)
            edge = np.concatenate([t[0], t[-1], t[:, 0], t[:, -1]])
            assert (edge == 0).all(), (i, kind, np.abs(edge).max())
            assert (t[platform] == terrain.origins[i, j, 2]).all(), (i, kind, np.ptp(t[platform]))
            assert tuple(terrain.origins[i, j, :2]) == ((i + 0.5) * cfg.tile_size, (j + 0.5) * cfg.tile_size)
    nb = round(cfg.border / h)
    assert (terrain.heights[:nb] == 0).all() and (terrain.heights[:, :nb] == 0).all()
    assert (terrain.heights[-nb:] == 0).all() and (terrain.heights[:, -nb:] == 0).all()


def test_level_5_is_the_medium_terrain(terrain):
    """Level 5 with the defaults: 7 cm stairs, 15 degree slopes, rough ground of at most 4 cm peak to peak."""
    cfg = ROUGH.env.terrain
    h, c = cfg.horizontal_scale, round(cfg.tile_size / cfg.horizontal_scale) // 2
    first = {kind: terrain.column_types.index(kind) for kind in set(terrain.column_types)}

    def outwards(kind: str) -> np.ndarray:  # level 5, from the centre towards +y
        return tile(terrain, cfg, 5, first[kind])[c, c:].astype(np.float64)

    step = cfg.step_per_level * 5
    for kind, sign in (("stairs_up", 1.0), ("stairs_down", -1.0)):
        rises = np.diff(outwards(kind))
        rises = rises[rises != 0]
        assert step == pytest.approx(0.07) and np.allclose(rises, sign * step, atol=1e-6), (kind, rises)
        assert rises.size == math.floor((cfg.tile_size / 2 - cfg.platform / 2) / cfg.step_width) + 1
    grade = math.tan(math.radians(cfg.slope_per_level * 5))
    first_out = round(cfg.platform / 2 / h) + 1
    for kind, sign in (("slope_up", 1.0), ("slope_down", -1.0)):
        slope = np.diff(outwards(kind))[first_out:-2] / h  # between the platform and the edge ring
        assert np.allclose(slope, sign * grade, atol=1e-4) and grade == pytest.approx(math.tan(math.radians(15)))
    rough = tile(terrain, cfg, 5, first["rough"])
    assert 0.03 < np.ptp(rough) <= cfg.rough_per_level * 5 + 1e-6 and cfg.rough_per_level * 5 == pytest.approx(0.04)
    blocks = tile(terrain, cfg, 5, first["obstacles"])
    assert 0 < np.abs(blocks).max() <= cfg.obstacle_per_level * 5 + 1e-6


def test_column_types_follow_the_proportions():
    cfg = ROUGH.env.terrain
    shares = cfg.proportions.as_dict()
    types = column_types(cfg)
    assert {t: types.count(t) for t in TILE_TYPES} == {t: round(s / sum(shares.values()) * cfg.columns)
                                                       for t, s in shares.items()}
    assert types == tuple(sorted(types, key=TILE_TYPES.index))  # grouped, in TILE_TYPES order
    only = {t: 0.0 for t in TILE_TYPES}
    custom = TerrainConfig(type="generated", columns=8, proportions=TerrainProportions(**{**only, "flat": 1.0,
                                                                                           "stairs_up": 3.0}))
    assert column_types(custom) == ("flat",) * 2 + ("stairs_up",) * 6
    every = TerrainConfig(type="generated", columns=8, proportions=TerrainProportions(**{t: 1.0 for t in TILE_TYPES}))
    assert column_types(every) == TILE_TYPES


# ------------------------------------------------------------------------------- heightfield vs lookups
def test_mujoco_heightfield_agrees_with_the_lookups(terrain):
    """``mj_ray`` straight down onto the compiled heightfield vs ``Terrain.height_at`` (float64) and torch
    ``Ground.height`` (float32). MuJoCo splits each cell into two triangles, the lookups interpolate bilinearly:
    where the cell's four corners lie in one plane both are that plane (tight tolerance); elsewhere (stair
    corners, block corners, slope ridges, rough ground) they differ by at most a quarter of the cell's twist
    |z00 - z01 - z10 + z11| (1.75 cm at a 7 cm stair corner)."""
    model = terrain_scene(terrain).compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    cfg, rng = ROUGH.env.terrain, np.random.default_rng(0)
    size = np.array(terrain.heights.shape) - 1.0
    uniform = rng.uniform(0, 1, (3000, 2)) * size * terrain.horizontal_scale - terrain.border
    # points along every tile's diagonals, where the ring-shaped stairs and slopes have their corners
    t = rng.uniform(-cfg.tile_size / 2, cfg.tile_size / 2, 4000)
    ij = rng.integers(0, [cfg.levels, cfg.columns], (4000, 2))
    diagonal = terrain.origins[ij[:, 0], ij[:, 1], :2] + np.stack([t, t * rng.choice([-1, 1], 4000)], 1)
    points = np.concatenate([uniform, diagonal]).astype(np.float32).astype(np.float64)

    top = float(terrain.heights.max()) + 1.0
    geom = np.zeros(1, dtype=np.int32)
    hit = np.array([top - mujoco.mj_ray(model, data, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]), None, 1, -1,
                                        geom) for x, y in points])
    assert (hit < top).all()
    bilinear = np.array([terrain.height_at(x, y) for x, y in points])
    lookup = ground(terrain).height(torch.tensor(points, dtype=torch.float32)).double().numpy()
    np.testing.assert_allclose(lookup, bilinear, atol=5e-5, rtol=0)

    f = (points + terrain.border) / terrain.horizontal_scale
    a, b = np.floor(f).astype(int).T
    z = terrain.heights.astype(np.float64)
    twist = np.abs(z[a, b] - z[a, b + 1] - z[a + 1, b] + z[a + 1, b + 1])
    planar = twist < 1e-6
    error = np.abs(hit - bilinear)
    assert error[planar].max() < 2e-5, error[planar].max()
    assert (error[~planar] <= twist[~planar] / 4 + 2e-5).all()
    assert (~planar).sum() > 500 and error.max() > 0.005  # the bound was exercised, at step corners too


# ------------------------------------------------------------------------------------------- curriculum
def curriculum_ground(n: int, **fields) -> Ground:
    cfg = TerrainConfig(type="generated", levels=5, columns=2, max_init_level=2, **fields)
    return ground(generate(cfg), n, cfg)


def walk(g: Ground, distances: list[float]) -> torch.Tensor:
    """Base positions ``distances`` (m) along x from each env's tile centre."""
    start = g.origins[g.levels, g.columns, :2]
    return start + torch.tensor(distances).unsqueeze(1) * torch.tensor([1.0, 0.0])


def test_curriculum_moves_masked_envs_up_and_down():
    g = curriculum_ground(8)
    g.levels.copy_(torch.tensor([2, 2, 2, 2, 2, 0, 2, 2]))
    half_tile = 4.0
    distances = [5.0, 0.1, 5.0, 0.1, 3.0, 0.0, half_tile - 0.01, 0.0]
    commands = torch.tensor([[1.0, 0.0, 0.0]] * 8)
    commands[4] = torch.tensor([0.2, 0.0, 0.5])  # 3 m walked of 0.2 m/s x 20 s: more than half, less than a tile
    commands[7] = 0.0  # standing still: never down
    mask = torch.tensor([True, True, False, False, True, True, True, True])
    g.update_levels(mask, walk(g, distances), commands, 20.0)
    # up (> half a tile), down (< half the commanded 20 m), two unmasked, stays, never below 0, down, stays
    assert g.levels.tolist() == [3, 1, 2, 2, 2, 0, 1, 2]


def test_past_the_top_level_an_env_goes_to_a_random_level():
    g = curriculum_ground(400)
    g.levels.fill_(4)
    g.update_levels(torch.ones(400, dtype=torch.bool), walk(g, [5.0] * 400), torch.ones(400, 3), 20.0)
    assert sorted(g.levels.unique().tolist()) == [0, 1, 2, 3, 4]
    g.levels.fill_(4)
    g.update_levels(torch.zeros(400, dtype=torch.bool), walk(g, [5.0] * 400), torch.ones(400, 3), 20.0)
    assert (g.levels == 4).all()


def test_initial_levels_fixed_level_and_no_curriculum():
    g = curriculum_ground(300)
    g.draw_levels()
    assert sorted(g.levels.unique().tolist()) == [0, 1, 2]  # up to max_init_level
    fixed = curriculum_ground(300, fixed_level=3)
    fixed.draw_levels()
    assert (fixed.levels == 3).all()
    off = curriculum_ground(300, curriculum=False)
    off.draw_levels()
    assert sorted(off.levels.unique().tolist()) == [0, 1, 2, 3, 4]  # every level
    for h in (fixed, off):
        before = h.levels.clone()
        everyone = torch.ones(300, dtype=torch.bool)
        h.update_levels(everyone, walk(h, [5.0] * 300), torch.ones(300, 3), 20.0)
        h.update_levels(everyone, walk(h, [0.0] * 300), torch.ones(300, 3), 20.0)
        assert torch.equal(h.levels, before)
    assert (torch.div(torch.arange(300) * 2, 300, rounding_mode="floor") == g.columns).all()  # columns by index


# ------------------------------------------------------------------------------------------ height scan
def sloped(grade: float) -> Terrain:
    """A 20 m x 20 m map rising ``grade`` along x (0 at x = 0)."""
    h, border, n = 0.05, 5.0, 401
    x = np.arange(n) * h - border
    heights = np.repeat((grade * x)[:, None], n, axis=1).astype(np.float32)
    return Terrain(heights=heights, horizontal_scale=h, border=border, origins=np.zeros((1, 1, 3), np.float32),
                   column_types=("slope_up",), tile_size=10.0)


def test_height_scan_points_are_x_major():
    scan = HeightScanConfig(enabled=True)
    g = ground(None, scan=scan)
    xs = torch.linspace(-scan.size_x / 2, scan.size_x / 2, scan.points_x)
    ys = torch.linspace(-scan.size_y / 2, scan.size_y / 2, scan.points_y)
    assert g.scan_points.shape == (scan.num_points, 2) == (187, 2)
    for i in (0, 3, scan.points_x - 1):
        for j in (0, 7, scan.points_y - 1):
            assert torch.equal(g.scan_points[i * scan.points_y + j], torch.stack([xs[i], ys[j]]))


def test_height_scan_on_a_plane_is_the_base_height():
    base = torch.tensor([[0.0, 0.0, 0.3], [12.0, -7.0, 0.45], [-3.0, 2.0, 0.2]])
    yaw = torch.tensor([0.0, 1.0, -2.5])
    for g in (ground(None, 3), ground(generate(TerrainConfig(type="generated", levels=2, columns=2,
                                                           max_init_level=0, proportions=TerrainProportions(
                                                               **{t: float(t == "flat") for t in TILE_TYPES}))), 3)):
        assert torch.equal(g.scan(base, yaw), base[:, 2:3].expand(3, 187))


def test_height_scan_turns_with_the_base_on_a_slope():
    grade, scan = 0.3, HeightScanConfig(enabled=True)
    g = ground(sloped(grade), 2, scan=scan)
    base = torch.tensor([[3.0, 4.0, 2.0], [3.0, 4.0, 2.0]])
    values = g.scan(base, torch.tensor([0.0, math.pi / 2])).reshape(2, scan.points_x, scan.points_y)
    xs = torch.linspace(-scan.size_x / 2, scan.size_x / 2, scan.points_x)
    ys = torch.linspace(-scan.size_y / 2, scan.size_y / 2, scan.points_y)
    # heading +x: the ground rises along the scan's x rows; heading +y: it falls towards the scan's +y (left = -x)
    ahead = (2.0 - grade * (3.0 + xs)).unsqueeze(1).expand(-1, scan.points_y)
    turned = (2.0 - grade * (3.0 - ys)).unsqueeze(0).expand(scan.points_x, -1)
    torch.testing.assert_close(values[0], ahead, atol=1e-5, rtol=0)
    torch.testing.assert_close(values[1], turned, atol=1e-5, rtol=0)


def test_env_observes_the_scan_in_the_critic_exactly_and_in_the_policy_with_noise():
    env = rough_env(4, proportions=TerrainProportions(**{t: float(t == "flat") for t in TILE_TYPES}),
                    levels=2, columns=2, max_init_level=0)
    obs = env.reset(seed=0)
    scan = env.cfg.height_scan
    end = 12 + 3 * env.num_joints
    scale = OBS_SCALES["height_scan"]
    expected = torch.full((4, scan.num_points), (env.spawn_height - scan.offset) * scale)
    torch.testing.assert_close(obs["critic"][:, end:end + scan.num_points], expected, atol=1e-5, rtol=0)
    policy = obs["policy"][:, end:]
    assert policy.shape == (4, scan.num_points) and not torch.allclose(policy, expected)
    assert ((policy - expected).abs() <= scan.noise * scale * env.cfg.noise.scale + 1e-5).all()


# --------------------------------------------------------------------------------- spawning and the edge
def test_a_robot_spawned_on_every_tile_stands_on_it():
    """One robot per tile of every type and level (8 columns, one per type, gaps included); zero actions for
    1 s: none ends its episode, each base stays 0.2-0.35 m above the ground under it, on its own tile."""
    every = TerrainProportions(**{t: 1.0 for t in TILE_TYPES})
    levels = ROUGH.env.terrain.levels
    env = rough_env(8 * levels, columns=8, proportions=every)
    env.reset(seed=0)
    env.ground.levels.copy_(torch.arange(8 * levels) % levels)
    env.reset_envs(torch.ones(env.num_envs, dtype=torch.bool))  # restart everyone on the tiles set above
    assert len(set(zip(env.ground.levels.tolist(), env.ground.columns.tolist(), strict=True))) == 8 * levels
    zero = torch.zeros(env.num_envs, env.num_joints)
    for _ in range(round(1.0 / env.dt)):
        _, _, term, trunc, _ = env.step(zero)
        assert not term.any() and not trunc.any(), (term.nonzero(), trunc.nonzero())
    qpos = env.physics.read().qpos
    height = qpos[:, 2] - env.ground.height(qpos[:, :2])
    assert ((height > 0.2) & (height < 0.35)).all(), height
    centre = env.ground.origins[env.ground.levels, env.ground.columns, :2]
    assert ((qpos[:, :2] - centre).abs() < env.cfg.terrain.platform / 2).all()


def test_ground_outside_near_every_edge_of_the_map(terrain):
    g = ground(terrain, 8)
    low = -terrain.border
    high = (np.array(terrain.heights.shape) - 1) * terrain.horizontal_scale - terrain.border
    mid = float(high[1] / 2)
    xy = torch.tensor([[low + 0.9, mid], [high[0] - 0.9, mid], [mid, low + 0.9], [mid, high[1] - 0.9],
                       [low + 1.1, mid], [high[0] - 1.1, mid], [mid, low + 1.1], [mid, high[1] - 1.1]],
                      dtype=torch.float32)
    assert g.outside(xy).tolist() == [True] * 4 + [False] * 4
    assert not ground(None, 8).outside(xy * 100).any()  # a plane has no edge


def test_a_robot_near_the_map_edge_is_truncated_not_terminated():
    env = rough_env(4)
    env.reset(seed=0)
    qpos = env.physics.read().qpos.clone()
    qpos[0, :3] = torch.tensor([-env.terrain.border + 0.5, 20.0, env.spawn_height])  # on the flat border
    qpos[0, 3:7] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    mask = torch.tensor([True, False, False, False])
    env.physics.reset(mask, qpos, torch.zeros(4, env.model.nv))
    env.state.episode_length.zero_()
    obs, _, term, trunc, info = env.step(torch.zeros(4, env.num_joints))
    assert trunc.tolist() == [True, False, False, False] and not term.any()
    assert info["final_obs"] is not None and env.state.episode_length[0] == 0  # restarted on its tile
    start = env.physics.read().qpos[0, :2]
    assert (start - env.ground.origins[env.ground.levels[0], env.ground.columns[0], :2]).abs().max() <= 0.5


# ------------------------------------------------------------------------------------------- resume
def resume_config():
    """quadruped-rough, 16 envs starting on levels 0-4, 0.5 s episodes starting at their tile's centre: most
    robots cover less than half their commanded distance and go down a level at each reset, within the 4 x 8
    steps."""
    cfg = ROUGH
    env = dataclasses.replace(cfg.env, num_envs=16, backend="native", episode_length_s=0.5,
                              terrain=dataclasses.replace(cfg.env.terrain, spawn_radius=0.0, max_init_level=4))
    return dataclasses.replace(
        cfg, env=env,
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=4, device="cpu", save_interval=100),
        algorithm=dataclasses.replace(cfg.algorithm, num_learning_epochs=2, num_mini_batches=2))


def resume_runner() -> OnPolicyRunner:
    cfg = resume_config()
    return OnPolicyRunner(get_task("quadruped-rough").make_env(cfg.env, CPU), cfg, task="quadruped-rough", quiet=True)


def test_rough_k_plus_k_resumed_equals_2k_straight(tmp_path):
    straight = resume_runner()
    straight.learn()

    first = resume_runner()
    first.learn(num_iterations=2)
    saved = first.env.ground.levels.clone()
    path = first.save(tmp_path / "model_2.pt")
    resumed = resume_runner()
    resumed.load_state_dict(ckpt.load(path))
    resumed.learn()

    drawn = get_task("quadruped-rough").make_env(resume_config().env, CPU)
    drawn.reset(seed=first.rank_seed)  # the levels the runs started with
    end = resumed.env.ground.levels
    assert not torch.equal(drawn.ground.levels, saved) and not torch.equal(saved, end)  # changed before and after
    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert torch.equal(straight.env.ground.levels, end)
    for name in ("commands", "heading", "privileged"):
        assert torch.equal(getattr(straight.env.state, name), getattr(resumed.env.state, name)), name
    assert torch.equal(straight.env.physics.read().qpos, resumed.env.physics.read().qpos)


def test_restarted_rows_observed_alone_on_the_cpu_equal_the_fixed_shape_observation():
    """On the CPU the first observation of restarted envs is computed for their rows only; the fixed-shape path
    (every row, then picked: GPUs) must give the same observations, bit for bit, and the same random stream."""
    def rollout(fixed_shapes: bool) -> list[torch.Tensor]:
        cfg = dataclasses.replace(ROUGH.env, num_envs=16, backend="native", episode_length_s=0.3)
        env = get_task("quadruped-rough").make_env(cfg, CPU)
        assert isinstance(env, LocomotionEnv)
        if fixed_shapes:  # the GPU's path, on the CPU (empty masks still skipped: the same random stream)
            env.fixed_shapes = True
            env._needed = lambda mask: bool(mask.any())  # type: ignore[method-assign]
            env.parts = env._assemble()  # the parts (pushes) ask the patched test
        g = torch.Generator().manual_seed(1)
        out = list(env.reset(seed=2).values())
        for _ in range(40):
            obs, rew, term, trunc, info = env.step(torch.randn(16, env.num_joints, generator=g))
            out += [*obs.values(), rew, term | trunc]
        return out

    a, b = rollout(False), rollout(True)
    assert len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert sum(int(x.sum()) for x in a[5::4]) > 16  # many restarts


# ------------------------------------------------------------------------------------------- host syncs
def test_the_gpu_path_of_a_rough_step_has_no_host_sync():
    """With the fixed-shape (GPU) path forced on the CPU, the task logic of quadruped-rough's steps (curriculum,
    spawn, scan, heading commands, resets) calls nothing that copies a device value to the host; the native
    physics backend's own numpy conversions are not counted (a GPU backend has none)."""
    import sys

    from torch.overrides import TorchFunctionMode

    from tests.rl_core.test_host_syncs import SYNCING

    class TaskSyncs(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls: list[str] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            caller = sys._getframe(1).f_code.co_filename
            reduces = name in ("any", "all") and (len(args) > 1 or bool(kwargs and "dim" in kwargs))  # per row
            if name in SYNCING and "envs/physics" not in caller and not reduces:
                self.calls.append(f"{name} in {caller}:{sys._getframe(1).f_lineno}")
            return func(*args, **(kwargs or {}))

    env = rough_env(16, levels=2, columns=2)
    env.cfg = dataclasses.replace(env.cfg, episode_length_s=0.2)  # episode ends (and curriculum moves) every 10 steps
    env.max_episode_length = 10
    env.fixed_shapes = True
    env.reset(seed=0)
    actions = torch.zeros(env.num_envs, env.num_joints)
    with TaskSyncs() as mode:
        for _ in range(25):
            env.step(actions)
    assert mode.calls == []
