"""Contract tests of every registered locomotion task (the built-in quadruped and the example robot of
docs/robots.md) on each physics backend (MJX at a small batch: it compiles once per task and module)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from configs.catalog import get_task
from contract.errors import UserError
from envs.robots.quadruped import LEGS, QUADRUPED
from envs.tasks.locomotion import PRIVILEGED_TERMS, LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.observations import TERM_NAMES
from rl_core.env_api import NativeThreads, VecEnv
from tests.helpers import model_field
from tests.locomotion_tasks import LOCOMOTION_TASKS, make_task_env

_NEEDS = {"mjx": "mujoco.mjx", "warp": "mujoco_warp"}
N = 16


def _on_terrain(task: str) -> bool:
    return get_task(task).default_config().env.terrain.type == "generated"


DEFAULT_ROWS = {"mjx": "quadruped-flat", "warp": "quadruped-flat"}
"""The one task per compiled backend in the default suite; the other tasks' MJX and Warp rows run under ``slow``
(``-m slow``). Native runs every task by default."""


def _params() -> list:
    """(task, backend, collisions) triples: every registered locomotion task on every backend. By default every task
    on native and one task per compiled backend (``DEFAULT_ROWS``; marked ``mjx`` / ``warp``); the rest of the
    task x backend product is marked ``slow`` as well (each row compiles its task's model for its backend).

    On generated terrain MJX runs with the feet colliding only, and with every collision under ``slow``: MJX
    collides each geom with a fixed square of heightfield prisms sized by the geom's bounding radius (the
    torso box: 10 x 10 cells, 200 prisms; each leg capsule 6 x 6; each foot 2 x 2), every substep, so the
    full model steps about 50 times slower than on a plane (about 0.3 s per step of 16 envs on this CPU,
    110 s for these tests), the feet alone as fast as on a plane."""
    out = []
    for task in LOCOMOTION_TASKS:
        name = task.rsplit("/", 1)[-1]
        out.append(pytest.param((task, "native", None), id=f"{name}-native"))
        terrain = _on_terrain(task)
        if name not in NO_MJX:
            out.append(pytest.param((task, "mjx", "feet" if terrain else None), id=f"{name}-mjx" + "-feet" * terrain,
                                    marks=_marks("mjx", task)))
        if terrain:
            out.append(pytest.param((task, "mjx", None), id=f"{name}-mjx", marks=[pytest.mark.mjx, pytest.mark.slow]))
        out.append(pytest.param((task, "warp", None), id=f"{name}-warp", marks=_marks("warp", task)))
    return out


def _marks(backend: str, task: str) -> list:
    """The backend's marker, and ``slow`` unless the task is the backend's default row."""
    return [getattr(pytest.mark, backend)] + ([] if DEFAULT_ROWS[backend] == task else [pytest.mark.slow])


NO_MJX = ("anymal_like.py:flat", "go_like.py:flat")
"""Examples left off MJX: anymal_like has cylinder-box pairs MJX cannot collide (its env refuses MJX in one line:
``test_mjx_refuses_a_model_it_cannot_simulate_in_one_line``); go_like is the same kind of quadruped as the
built-in one there (MJX's time goes to the humanoid with held and welded joints instead)."""


@pytest.fixture(scope="module", params=_params())
def env(request):
    task, backend, collisions = request.param
    if backend in _NEEDS:
        pytest.importorskip(_NEEDS[backend])
    e = make_task_env(task, num_envs=N, backend=backend, **({"collisions": collisions} if collisions else {}))
    yield e
    e.close()


@pytest.mark.mjx
def test_mjx_refuses_a_model_it_cannot_simulate_in_one_line():
    pytest.importorskip("mujoco.mjx")
    task = next(t for t in LOCOMOTION_TASKS if t.endswith("anymal_like.py:flat"))
    with pytest.raises(UserError) as e:
        make_task_env(task, num_envs=2, backend="mjx")
    assert "\n" not in str(e.value)
    assert str(e.value).startswith("env.backend 'mjx': MJX (jax) cannot simulate this model")
    assert "collisions not implemented" in str(e.value) and "use env.backend native or warp" in str(e.value)


def random_actions(seed: int, steps: int, n: int = 12) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(N, n, generator=g) for _ in range(steps)]


def rollout(env: LocomotionEnv, seed: int, actions: list[torch.Tensor]) -> list[torch.Tensor]:
    out = [env.reset(seed=seed)["policy"].clone()]
    for a in actions:
        obs, rew, term, trunc, _ = env.step(a)
        out += [obs["policy"].clone(), rew.clone(), term.clone(), trunc.clone()]
    return out


def expected_obs_dims(env: LocomotionEnv) -> dict[str, int]:
    """12 + 3 x joints values, plus the height scan when enabled, less the excluded terms for the policy, times the
    frames of its observation history; a separate critic (privileged, or a policy with excluded terms) gets every
    term of the current step, and the privileged terms."""
    scan, J = env.cfg.height_scan, env.num_joints
    sizes = dict(zip(TERM_NAMES[:7], (3, 3, 3, 3, J, J, J), strict=True))
    sizes |= {"height_scan": scan.num_points} if scan.enabled else {}
    full = sum(sizes.values())
    policy = env.cfg.obs_history * (full - sum(sizes[name] for name in env.cfg.policy_exclude))
    critic = full + (len(PRIVILEGED_TERMS) if env.cfg.privileged_critic else 0)
    separate = env.cfg.privileged_critic or bool(env.cfg.policy_exclude)
    return {"policy": policy, **({"critic": critic} if separate else {})}


def test_shapes_dtypes_and_no_nan_after_many_random_steps(env):
    assert isinstance(env, VecEnv)
    assert isinstance(env, NativeThreads) and env.rollout_torch_threads == 1  # a CPU backend: one torch thread
    J = env.num_joints
    assert env.obs_dims == expected_obs_dims(env) and env.action_spec.n == J and not env.action_spec.discrete
    obs = env.reset(seed=0)
    assert {g: o.shape for g, o in obs.items()} == {g: (N, n) for g, n in env.obs_dims.items()}
    assert all(o.dtype == torch.float32 for o in obs.values())
    for a in random_actions(1, 150, J):
        obs, rew, term, trunc, info = env.step(a)
        assert all(torch.isfinite(o).all() for o in obs.values()) and torch.isfinite(rew).all()
    assert rew.shape == (N,) and rew.dtype == torch.float32
    assert term.dtype == torch.bool and trunc.dtype == torch.bool and term.shape == trunc.shape == (N,)
    assert all(v.dim() == 0 for v in info["log"].values())
    assert {"rew_tracking_lin_vel", "lin_vel_error", "terminated"} <= set(info["log"])
    assert {"rew_feet_air_time", "rew_feet_air_time_biped"} & set(info["log"])  # the quadruped's or the biped's


def test_same_seed_same_rollout(env):
    actions = random_actions(2, 30, env.num_joints)
    a, b = rollout(env, 7, actions), rollout(env, 7, actions)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    c = rollout(env, 8, actions)
    assert not torch.equal(a[0], c[0])


def test_time_out_is_truncation_and_auto_reset_gives_a_fresh_state(env):
    env.reset(seed=3)
    env.state.episode_length.fill_(env.max_episode_length - 1)
    env.state.episode_length[0] = 5  # env 0 keeps running
    stand = torch.zeros(N, env.num_joints)
    obs, _, term, trunc, info = env.step(stand)
    assert trunc[1:].all() and not trunc[0] and not term.any()
    assert torch.equal(env.state.episode_length[1:], torch.zeros(N - 1, dtype=torch.long))
    assert env.state.episode_length[0] == 6
    # the returned observation is the first of the new episode; final_obs is the last of the old one
    assert not torch.allclose(obs["policy"][1:], info["final_obs"]["policy"][1:])
    J = env.num_joints
    assert torch.allclose(policy_term(env, obs, "last_actions"), torch.zeros(N, J))  # last actions zeroed (env 0's too)
    qpos = env.physics.read().qpos
    b = env.robot.base_qpos_adr
    ground = env.ground.height(qpos[1:, b:b + 2])  # 0 on the plane; the start tile's platform on terrain
    assert torch.allclose(qpos[1:, b + 2], ground + env.spawn_height, atol=1e-5)
    assert env.spawn_height == env.robot.spec.base_height or env.terrain is not None


def policy_term(env: LocomotionEnv, obs: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    """The columns of one term of the policy observation (``env.obs_layout``)."""
    start = 0
    for term_name, n in env.obs_layout:
        if term_name == name:
            return obs["policy"][:, start:start + n]
        start += n
    raise KeyError(name)


def first_two_terminate(env: LocomotionEnv, place) -> None:
    """Restart the first two robots in the pose ``place(qpos)`` sets, at rest; within 3 steps exactly those two
    must end as terminated (never truncated)."""
    env.reset(seed=4)
    r = env.physics.read()
    qpos, qvel = r.qpos.clone(), torch.zeros_like(r.qvel)
    place(qpos)
    mask = torch.zeros(N, dtype=torch.bool)
    mask[:2] = True
    env.physics.reset(mask, qpos, qvel)
    env.state.episode_length[:] = 0
    terminated = torch.zeros(N, dtype=torch.bool)
    for _ in range(3):
        _, _, term, trunc, _ = env.step(torch.zeros(N, env.num_joints))
        terminated |= term
        assert not (term & trunc).any()
    assert terminated[:2].all() and not terminated[2:].any()


def test_torso_on_the_ground_terminates_and_is_not_truncation(env, request):
    if "go_like.py:flat-warp" in request.node.name:
        # A reset of go_like (joints at 0.5 x the default pose: straight legs) starts its feet up to 11 cm inside
        # its soft floor; on Warp one of these 14 resets diverges at its first step (native MuJoCo pushes the
        # feet out). The divergence guard ends that episode as terminated, which this test counts as a wrong one.
        # Whether one of the 14 diverges depends on the draws (it passed at 94da915 and after): not strict.
        request.applymarker(pytest.mark.xfail(reason="go_like: a reset deep in its soft floor may diverge on Warp",
                                              strict=False))
    def upside_down_on_the_ground(qpos: torch.Tensor) -> None:
        qpos[:2, 2] = env.ground.height(qpos[:2, :2]) + 0.06  # on terrain: above the ground at the start
        qpos[:2, 3:7] = torch.tensor([0.0, 1.0, 0.0, 0.0])

    first_two_terminate(env, upside_down_on_the_ground)


def test_resets_randomize_model_parameters_within_ranges(env):
    env.reset(seed=5)
    rnd = env.cfg.randomization
    friction = model_field(env.physics, "geom_friction")[:, :, 0]
    assert friction.min() >= rnd.friction[0] - 1e-6 and friction.max() <= rnd.friction[1] + 1e-6
    assert friction[:, 0].unique().numel() > 1  # per env
    body = env.robot.mass_body_id
    mass = model_field(env.physics, "body_mass")[:, body]
    base = float(env.model.body_mass[body])
    assert (mass >= base + rnd.added_base_mass[0] - 1e-5).all() and (mass <= base + rnd.added_base_mass[1] + 1e-5).all()
    kp = model_field(env.physics, "actuator_gainprm")[:, :, 0]
    nominal = torch.tensor(env.model.actuator_gainprm[:, 0], dtype=torch.float32)
    assert torch.allclose(kp / nominal, kp[:, :1] / nominal[0])  # one scale per env
    low = rnd.gain_scale[0] * rnd.motor_strength[0] * rnd.kp_scale[0]  # the factors on kp (each (1, 1) when off)
    high = rnd.gain_scale[1] * rnd.motor_strength[1] * rnd.kp_scale[1]
    assert (kp >= nominal * low - 1e-4).all() and (kp <= nominal * high + 1e-4).all()


def test_state_dict_round_trip_continues_identically(env):
    env.reset(seed=6)
    for a in random_actions(3, 5, env.num_joints):
        env.step(a)
    state = env.state_dict()
    after = random_actions(4, 10, env.num_joints)
    first = [env.step(a)[0]["policy"].clone() for a in after]
    env.load_state_dict(state)
    second = [env.step(a)[0]["policy"].clone() for a in after]
    tol = 0.0 if env.backend == "native" else 1e-5
    assert all(torch.allclose(x, y, atol=tol, rtol=0) for x, y in zip(first, second, strict=True))


def test_commands_within_ranges_and_small_ones_zeroed(env):
    env.reset(seed=9)
    c, cfg = env.commands, env.cfg.commands
    assert (c[:, 0] >= cfg.lin_vel_x[0]).all() and (c[:, 0] <= cfg.lin_vel_x[1]).all()
    assert (c[:, 2] >= cfg.yaw_rate[0]).all() and (c[:, 2] <= cfg.yaw_rate[1]).all()
    norm = c[:, :2].norm(dim=1)
    assert ((norm == 0) | (norm >= cfg.min_lin_vel)).all()


def test_zero_noise_config_gives_noise_free_observations():
    cfg = dataclasses.replace(LocomotionEnvConfig(num_envs=4, backend="native"),
                              noise=dataclasses.replace(LocomotionEnvConfig().noise, scale=0.0))
    env = LocomotionEnv(cfg, QUADRUPED)
    obs = env.reset(seed=0)["policy"]
    assert torch.allclose(obs[:, 6:9], torch.tensor([0.0, 0.0, -1.0]).expand(4, 3), atol=1e-6)  # upright at reset


def test_nan_state_is_detected_reset_and_marked_invalid(env):
    """NaN velocities in two envs: MuJoCo C resets them itself (warning counters), MJX and Warp leave NaN (isfinite)."""
    env.reset(seed=6)
    mask = torch.zeros(N, dtype=torch.bool)
    mask[[2, 9]] = True
    env.physics.set_velocity(mask, torch.full((N, env.model.nv), float("nan")))
    obs, rew, term, trunc, info = env.step(torch.zeros(N, env.num_joints))
    assert torch.equal(info["invalid"].cpu(), mask) and torch.equal(term.cpu(), mask)
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all() and (rew[mask] == 0).all()
    assert info["log"]["diverged"].item() == 2 / N
    obs, rew, term, trunc, info = env.step(torch.zeros(N, env.num_joints))
    r = env.physics.read()
    assert torch.isfinite(r.qpos).all() and torch.isfinite(r.qvel).all() and not info["invalid"].any()


FEET_ONLY_BACKENDS = ["native", pytest.param("mjx", marks=[pytest.mark.mjx, pytest.mark.slow]),
                      pytest.param("warp", marks=[pytest.mark.warp, pytest.mark.slow])]
"""The feet-only model is one more compile per compiled backend: those rows run under ``slow``."""


@pytest.mark.parametrize("backend", FEET_ONLY_BACKENDS)
def test_feet_only_collisions_end_episodes_on_tilt_and_height(backend):
    if backend in _NEEDS:
        pytest.importorskip(_NEEDS[backend])
    env = LocomotionEnv(LocomotionEnvConfig(num_envs=N, backend=backend, collisions="feet", solver_iterations=1,
                                            ls_iterations=5), QUADRUPED)
    colliding = {env.model.geom(i).name for i in range(env.model.ngeom) if env.model.geom_contype[i]}
    assert colliding == {f"{leg}_foot" for leg in LEGS}
    assert (env.model.opt.iterations, env.model.opt.ls_iterations) == (1, 5)
    def fallen(qpos: torch.Tensor) -> None:
        qpos[0, 3:7] = torch.tensor([0.7071, 0.7071, 0.0, 0.0])  # rolled 90 degrees, at standing height
        qpos[1, 2] = 0.10  # upright but low, legs folded up over the torso: it sinks through the floor
        qpos[1, 3:7] = torch.tensor([1.0, 0.0, 0.0, 0.0])
        qpos[1, 7:] = torch.tensor([0.0, 3.1, -1.0] * 4)

    first_two_terminate(env, fallen)
    env.close()


@pytest.mark.parametrize("field,value", [("fall_tilt", 0.0), ("fall_height", -1.0), ("solver_iterations", 0),
                                         ("ls_iterations", 0), ("collisions", "none")])
def test_bad_collision_and_solver_settings_are_config_errors(field, value):
    from contract.errors import ConfigError

    with pytest.raises(ConfigError, match=f"env.{field}"):
        LocomotionEnvConfig(**{field: value})


def test_excluded_terms_leave_the_policy_and_the_critic_keeps_every_term_noise_free():
    cfg = LocomotionEnvConfig(num_envs=N, backend="native", policy_exclude=("base_lin_vel",))
    env = LocomotionEnv(cfg, QUADRUPED)
    full = LocomotionEnv(dataclasses.replace(cfg, policy_exclude=()), QUADRUPED)
    assert env.obs_dims == {"policy": 45, "critic": 48} and full.obs_dims == {"policy": 48}
    assert [name for name, _ in env.obs_layout] == list(TERM_NAMES[1:7])
    actions = random_actions(3, 20, env.num_joints)
    obs, ref = env.reset(seed=2), full.reset(seed=2)
    for a in actions:
        obs, *_ = env.step(a)
        ref, *_ = full.step(a)
    # Same physics and noise stream: the policy gets the full observation less its first three columns; the
    # critic gets the terms without noise (within the noise bound of the full one).
    assert torch.equal(obs["policy"], ref["policy"][:, 3:])
    assert not torch.equal(obs["critic"][:, 3:], ref["policy"][:, 3:])
    assert torch.allclose(obs["critic"], ref["policy"], atol=float(full.obs.noise_vec.max()) + 1e-6)
    critic = obs["critic"]  # the env mirrors the critic's group too (each term by its rule)
    assert torch.equal(env.mirror_obs(critic, "critic")[:, 3:], env.mirror_obs(critic[:, 3:], "policy"))
    env.close()
    full.close()


@pytest.mark.parametrize("value", [["base_velocity"], list(TERM_NAMES)])
def test_bad_policy_exclude_is_a_config_error(value):
    from contract.errors import ConfigError

    with pytest.raises(ConfigError, match="env.policy_exclude"):
        LocomotionEnvConfig(policy_exclude=tuple(value))


def test_duty_factor_difference_is_left_minus_right_time_on_the_ground():
    from envs.robots.mirror import side_pairs

    assert side_pairs(("FR_foot", "FL_foot", "RR_foot", "RL_foot")) == ((1, 3), (0, 2))
    assert side_pairs(("left_foot", "right_foot")) == ((0,), (1,)) and side_pairs(("a", "b")) == ((), ())
    env = LocomotionEnv(LocomotionEnvConfig(num_envs=4, backend="native"), QUADRUPED)
    names = env.robot.foot_names
    contact = torch.zeros(4, len(names), dtype=torch.bool)
    contact[0, names.index("FL_foot")] = True  # one left foot down: +1/2 over the two pairs
    contact[1, names.index("RR_foot")] = True  # one right foot down: -1/2
    contact[2] = True  # all down: 0
    from envs.tasks.locomotion import metrics

    zero = torch.zeros(4)
    diff = metrics.per_step(zero, zero, contact, names, env.side_feet)["duty_factor_difference"]
    assert diff.tolist() == [0.5, -0.5, 0.0, 0.0]
    env.reset(seed=0)
    _, _, _, _, info = env.step(torch.zeros(4, env.num_joints))
    assert info["metrics"]["duty_factor_difference"].shape == (4,)
    env.close()
