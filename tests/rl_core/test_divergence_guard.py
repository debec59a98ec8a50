"""The divergence guard: planted explosions (velocities of 1e6, a NaN in an observation, a finite speed below 1e3
but beyond the robot's bounds) never reach the rollout storage, the loss or the logged statistics; the robot's
speed bounds; the learner's own last line of defence for any env."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from configs.catalog import get_task
from configs.quadruped import FLAT_QUADRUPED
from envs.robots.humanoid import HUMANOID
from envs.robots.quadruped import QUADRUPED
from envs.scenes.assemble import build
from envs.tasks.bounds import speed_bounds
from envs.tasks.locomotion import MAX_SANE_QVEL, LocomotionEnv
from rl_core.runner import OnPolicyRunner
from tests.helpers import make_runner, tiny_cartpole

N, T = 8, 6


def _config():
    cfg = get_task("quadruped-flat").default_config()
    return dataclasses.replace(
        cfg, env=dataclasses.replace(cfg.env, num_envs=N, backend="native", physics_threads=1),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=T, max_iterations=2, device="cpu"),
        algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))


class Planter:
    """Wraps a LocomotionEnv: before step ``at``, world 1's velocities become 1e6, world 3's base moves at 200 m/s
    (finite, below MAX_SANE_QVEL, far beyond the quadruped's bound) and world 5's commands become NaN (a NaN in
    its observation and reward)."""

    def __init__(self, env: LocomotionEnv, at: int):
        self.env, self.at, self.t = env, at, 0
        self.num_envs, self.obs_dims = env.num_envs, env.obs_dims
        self.action_spec, self.device = env.action_spec, env.device
        self.invalid: list[torch.Tensor] = []
        self.observed: list[torch.Tensor] = []
        """The policy observations the env returned, before the learner normalizes (and clips) them."""

    def reset(self, seed=None):
        return self.env.reset(seed)

    def step(self, actions):
        env = self.env
        if self.t == self.at:
            qvel = env.physics.read().qvel.clone()
            qvel[1] = 1e6
            qvel[3, 0] = 200.0
            env.physics.set_velocity(torch.ones(N, dtype=torch.bool), qvel)
            commands = env.commands.clone()
            commands[5] = math.nan
            env.state.commands = commands
        self.t += 1
        out = env.step(actions)
        self.invalid.append(out[4]["invalid"].clone())
        self.observed.append(out[0]["policy"].clone())
        return out

    def close(self):
        pass


def test_planted_explosions_never_reach_the_storage_nor_the_logged_statistics():
    cfg = _config()
    env = Planter(LocomotionEnv(cfg.env, FLAT_QUADRUPED), at=2)
    assert 200.0 < MAX_SANE_QVEL and 200.0 > env.env.bounds.base_lin_vel
    runner = OnPolicyRunner(env, cfg, task="quadruped-flat", quiet=True)
    runner.obs = runner.env.reset(seed=0)
    env_log = runner.collect()
    s = runner.storage
    planted = torch.zeros(T, N, dtype=torch.bool)
    planted[2, [1, 3, 5]] = True
    assert torch.equal(s.weights == 0, planted)  # exactly the planted transitions are masked out of the loss
    assert torch.equal(torch.stack(env.invalid), planted)  # the env itself found all three
    assert s.terminated[2, [1, 3, 5]].all() and not s.truncated[2, [1, 3, 5]].any()  # ended (reset), not bootstrapped
    assert (s.rewards[2, [1, 3, 5]] == 0).all()
    for x in (s.obs, s.critic_obs, s.rewards, s.values, s.returns, s.advantages):
        if x is not None:
            assert torch.isfinite(x).all()
    # every observation the env returned is within its column's bound, noise included (the planted worlds were
    # reset in the same step); not the stored ones: normalized and clipped to policy.obs_clip (10), they cannot
    # exceed a bound of 50 or more
    observed = torch.stack(env.observed)
    assert (observed.abs() <= env.env.obs_bound + env.env.obs.noise_vec + 1e-4).all()
    assert observed.abs().max() < 50.0  # observations of healthy worlds stay within a few units
    physics = env.env.physics.read()
    assert physics.qvel.abs().max() < env.env.bounds.base_ang_vel  # the worlds were reset, not left broken
    # logged statistics: means over the worlds that did not diverge
    scalars = runner.iteration_scalars(env_log, {k: torch.zeros(()) for k in runner.alg.LOG_NAMES.values()}
                             | {"nonfinite_updates": torch.zeros(())}, torch.ones(()))
    assert scalars["Train/invalid_transitions"] == 3
    assert scalars["Train/diverged_share"] == pytest.approx(3 / (T * N))
    assert scalars["Env/diverged"] == pytest.approx(3 / (T * N))
    for name, value in scalars.items():
        if name.startswith("Env/"):
            assert math.isfinite(value) and abs(value) < 10.0, (name, value)  # a 1e6 world would give -1e10
    assert scalars["Env/lin_vel_error"] < 3.0
    # no episode of a diverged world counts (no success; no return)
    assert all(math.isfinite(v) for v in runner.episodes.recent_returns)
    assert len(runner.episodes.recent_stats["success"]) == 0  # the planted worlds ended, with no success value


def test_the_env_logs_exclude_diverged_worlds():
    cfg = _config()
    env = LocomotionEnv(cfg.env, FLAT_QUADRUPED)
    env.reset(seed=0)
    qvel = env.physics.read().qvel.clone()
    qvel[2] = 1e6
    env.physics.set_velocity(torch.ones(N, dtype=torch.bool), qvel)
    _, reward, terminated, truncated, info = env.step(torch.zeros(N, 12))
    assert info["invalid"].tolist() == [i == 2 for i in range(N)]
    assert reward[2] == 0 and terminated[2] and torch.isnan(info["episode_stats"]["success"][2])
    log = info["log"]
    assert abs(float(log["rew_lin_vel_z"])) < 1.0 and float(log["lin_vel_error"]) < 3.0
    assert float(log["terminated"]) == 0.0  # the diverged world is no fall
    assert float(log["diverged"]) == pytest.approx(1 / N)


def test_speed_bounds_follow_the_robot():
    q = build(QUADRUPED)
    b = speed_bounds(q.model, q.joint_dof_adr, QUADRUPED.base_height, push_vel=0.0)
    assert b.base_lin_vel == pytest.approx(5 * math.sqrt(9.81 * 0.30))  # Froude speed 5 on 0.30 m
    assert b.base_ang_vel == pytest.approx(2 * b.base_lin_vel / 0.30)  # a cheetah's speed (10) over the height
    by_name = dict(zip(q.joint_names, b.joint_vel, strict=True))
    # a calf (short lever) may spin faster than a thigh (the whole leg); every bound far above what it reaches
    assert by_name["FR_calf_joint"] > by_name["FR_thigh_joint"] > 60.0
    h = build(HUMANOID)
    hb = speed_bounds(h.model, h.joint_dof_adr, HUMANOID.base_height, push_vel=0.0)
    assert hb.base_lin_vel > b.base_lin_vel  # a taller robot may move faster
    ankle = dict(zip(h.joint_names, hb.joint_vel, strict=True))["right_ankle_pitch_joint"]
    assert ankle > 200.0  # a light foot on a short lever: a healthy 100 rad/s strike stays within
    doubled = speed_bounds(q.model, q.joint_dof_adr, QUADRUPED.base_height, push_vel=0.0, margin=2.0)
    assert doubled.base_lin_vel == pytest.approx(2 * b.base_lin_vel)


def test_the_learner_masks_nonfinite_observations_of_any_env():
    """rl_core's last line of defence, on a Gym task that knows nothing of divergence: a NaN observation masks
    the transition that produced it and the one that starts from it, and never reaches the storage."""
    cfg = tiny_cartpole()
    runner = make_runner(cfg)
    inner = runner.env

    class NanObservation:
        num_envs, obs_dims, action_spec, device = inner.num_envs, inner.obs_dims, inner.action_spec, inner.device

        def __init__(self):
            self.t = 0

        def reset(self, seed=None):
            return inner.reset(seed)

        def step(self, actions):
            obs, rew, term, trunc, info = inner.step(actions)
            self.t += 1
            if self.t == 4:
                obs = {"policy": obs["policy"].clone()}
                obs["policy"][1, 0] = math.nan
            return obs, rew, term, trunc, info

        def close(self):
            inner.close()

    runner.env = NanObservation()
    runner.obs = runner.env.reset(seed=0)
    runner.collect()
    s = runner.storage
    masked = (s.weights == 0).nonzero().tolist()
    assert masked == [[3, 1], [4, 1]]  # the step that returned the NaN and the step that started from it
    assert torch.isfinite(s.obs).all() and torch.isfinite(s.values).all() and torch.isfinite(s.returns).all()
    assert all(torch.isfinite(v).all() for v in runner.policy.obs_normalizer.state_dict().values())


def test_a_world_beyond_the_speed_bounds_diverged_even_with_its_observation_in_bounds():
    """The speed check itself (the observation check would also catch a fast base: two lines of defence)."""
    env = LocomotionEnv(_config().env, FLAT_QUADRUPED)
    b = env.bounds
    qvel = torch.zeros(6, env.model.nv)
    qvel[1, 0] = 0.9 * b.base_lin_vel
    qvel[2, 0] = 1.1 * b.base_lin_vel
    qvel[3, 4] = 1.1 * b.base_ang_vel
    calf = env.robot.joint_names.index("FR_calf_joint")
    qvel[4, env.robot.joint_dof_adr[calf]] = 0.9 * b.joint_vel[calf]
    qvel[5, env.robot.joint_dof_adr[calf]] = -1.1 * b.joint_vel[calf]
    assert env.judge.beyond_bounds(qvel).tolist() == [False, False, True, True, False, True]


def test_no_robot_starts_inside_the_terrain():
    """The spawn height on generated terrain (computed on the host, the same for every backend): after a reset no
    world has a contact (docs/backends.md, issue 30)."""
    import mujoco

    from configs.catalog import get_task

    spec = get_task("quadruped-rough")
    cfg = dataclasses.replace(spec.default_config().env, num_envs=256, backend="native")
    env = spec.make_env(cfg, torch.device("cpu"))
    env.reset(seed=0)
    qpos = env.physics.read().qpos.double().numpy()
    data = mujoco.MjData(env.model)
    touching = 0
    for q in qpos:
        data.qpos[:] = q
        data.qvel[:] = 0.0
        mujoco.mj_forward(env.model, data)
        touching += data.ncon > 0
    assert touching == 0
