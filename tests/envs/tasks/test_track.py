"""The motion-tracking family (``humanoid-track``, ``envs/tasks/track/``): the VecEnv contract on native MuJoCo and
on MuJoCo Warp's CPU device, the forward kinematics against MuJoCo, resets into the reference, clip ends and
falls, adaptive start sampling, exact resume, one-line refusals, a user's robot file, and export + sim2sim from
the ONNX file alone."""

from __future__ import annotations

import dataclasses
import io
import json

import mujoco
import numpy as np
import pytest
import torch

import play
from apps import sim2sim
from configs.catalog import get_task
from configs.track import HUMANOID_TRACK_ENV, track_config
from contract import motion, schema
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.sim2sim_track import PlainMujocoTracker
from envs.motion.keyframes import Key, Keyframes, make_clip
from envs.motion.kinematics import TreeKinematics
from envs.motion.robot import build_tracking
from envs.robots.humanoid import HUMANOID
from envs.tasks.track import TrackEnv, TrackEnvConfig
from envs.tasks.track.observations import TERM_NAMES
from envs.tasks.track.sampling import StartSampler
from rl_core.config_io import dump_yaml
from rl_core.env_api import Checkpointable, Exportable, VecEnv
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.actor_critic import ActorCritic
from rl_core.runner import OnPolicyRunner
from tests.robot_models import biped_spec, write

N = 8
TRACK_KEYS = sorted(["action_clip", "action_dim", "action_scale", "action_type", "actions", "base_joint",
                     "control_dt", "decimation", "default_joint_pos", "episode_length_s", "format", "iteration",
                     "joint_names", "joint_pos_limits", "kd", "kp", "motion", "motion_clips", "obs_dim", "obs_dtype",
                     "obs_layout", "obs_scales", "obs_shape", "robot", "scene_mjb", "sim_dt", "task", "task_family",
                     "torque_limits", "velocity_limits"])
"""The pinned keys of a track export (a change here is a schema change: docs/deploy.md and the version)."""


def make(num_envs: int = N, backend: str = "native", **fields) -> TrackEnv:
    return TrackEnv(dataclasses.replace(HUMANOID_TRACK_ENV, num_envs=num_envs, backend=backend, **fields), HUMANOID)


@pytest.fixture(scope="module", params=["native", pytest.param("warp", marks=pytest.mark.warp)])
def env(request):
    if request.param == "warp":
        pytest.importorskip("mujoco_warp")
    e = make(backend=request.param)
    yield e
    e.close()


def test_registered_with_every_joint_trained():
    spec = get_task("humanoid-track")
    cfg = spec.default_config()
    assert isinstance(cfg.env, TrackEnvConfig) and cfg == track_config(HUMANOID_TRACK_ENV)
    assert cfg.env.clips == ("keyframes:squat_wave",) and cfg.env.anchor_body == "torso"
    assert spec.validate is not None
    spec.validate(cfg.env)


def test_vec_env_contract(env):
    assert isinstance(env, VecEnv) and isinstance(env, Checkpointable) and isinstance(env, Exportable)
    J = env.num_joints
    assert J == 20 and env.action_spec.n == 20 and not env.action_spec.discrete
    assert env.obs_dims == {"policy": 3 * 3 + 3 * J + 2 * 2 * J + 3 + 6 + 1}
    obs = env.reset(seed=0)
    assert obs["policy"].shape == (N, env.obs_dims["policy"]) and obs["policy"].dtype == torch.float32
    g = torch.Generator().manual_seed(1)
    for _ in range(40):
        obs, rew, term, trunc, info = env.step(0.3 * torch.randn(N, J, generator=g))
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
    assert rew.shape == (N,) and rew.dtype == torch.float32 and term.dtype == trunc.dtype == torch.bool
    assert all(v.dim() == 0 for v in info["log"].values())
    assert {f"rew_{t}" for t in ("anchor_pos", "anchor_ori", "body_pos", "body_ori", "body_lin_vel", "body_ang_vel",
                                 "joint_pos", "action_rate")} <= set(info["log"])
    assert {"joint_pos_error", "anchor_pos_error", "start_entropy"} <= set(info["log"])
    assert set(info["metrics"]) == {"joint_pos_error", "anchor_pos_error", "anchor_ori_error", "body_pos_error"}


def test_forward_kinematics_match_mujoco():
    model = build_tracking(HUMANOID).model
    bodies = tuple(range(1, model.nbody))
    fk = TreeKinematics(model, bodies, torch.device("cpu"))
    data, rng, res = mujoco.MjData(model), np.random.default_rng(0), np.zeros(6)
    for _ in range(3):
        data.qpos[:] = model.qpos0
        quat = rng.normal(size=4)
        data.qpos[3:7] = quat / np.linalg.norm(quat)
        data.qpos[7:] = rng.uniform(-1, 1, model.nq - 7)
        data.qvel[:] = rng.normal(size=model.nv)
        mujoco.mj_forward(model, data)
        p = fk(torch.tensor(data.qpos[None], dtype=torch.float32), torch.tensor(data.qvel[None], dtype=torch.float32))
        for k, b in enumerate(bodies):
            mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, b, res, 0)
            assert np.abs(p.pos[0, k].numpy() - data.xpos[b]).max() < 1e-5
            assert np.abs(p.rot[0, k].numpy() - data.xmat[b].reshape(3, 3)).max() < 1e-5
            assert np.abs(p.lin_vel[0, k].numpy() - res[3:]).max() < 1e-5
            assert np.abs(p.ang_vel[0, k].numpy() - res[:3]).max() < 1e-5


def test_a_reset_puts_the_robot_in_the_reference_and_steps_along_the_clip():
    env = make(num_envs=4, start=dataclasses.replace(HUMANOID_TRACK_ENV.start, base_xy=0.0, base_yaw=0.0,
                                                      joint_pos=0.0), noise=dataclasses.replace(
                                                          HUMANOID_TRACK_ENV.noise, scale=0.0))
    env.reset(seed=3)
    frame = env.state.frame.clone()
    assert (frame >= 0).all() and (frame <= env.library.env_last - 1).all()
    r = env.physics.read()
    assert torch.allclose(r.qpos, env.library.qpos[env.library.rows(frame)], atol=1e-6)
    env.step(torch.zeros(4, 20))
    assert torch.equal(env.state.frame, frame + 1)


def test_the_clip_end_truncates_and_a_fall_terminates():
    env = make(num_envs=4)
    env.reset(seed=0)
    last = env.library.env_last
    env.state.frame = last - 1  # one step before each clip's end
    qpos = env.physics.read().qpos.clone()
    qpos[2, 2] -= 0.5  # env 2's base half a metre below the reference: beyond the 0.25 m band
    env.physics.reset(torch.tensor([False, False, True, False]), qpos, torch.zeros_like(env.physics.read().qvel))
    _, _, term, trunc, info = env.step(torch.zeros(4, 20))
    assert term.tolist() == [False, False, True, False] and trunc.tolist() == [True, True, False, True]
    assert info["episode_stats"]["clip_end"].tolist()[:2] == [1.0, 1.0]
    assert (env.state.frame < last).all()  # restarted


def test_adaptive_sampling_draws_more_starts_before_failures():
    gen = torch.Generator().manual_seed(0)

    def uniform(shape, low, high):
        return torch.rand(shape, generator=gen) * (high - low) + low

    cfg = HUMANOID_TRACK_ENV.start
    clip = torch.zeros(4000, dtype=torch.long)
    s = StartSampler(cfg, [501], 0.02, clip, uniform)  # 10 s: 10 bins of 1 s
    assert torch.allclose(s.probabilities(), torch.full((1, 10), 0.1)) and s.entropy() == pytest.approx(1.0)
    for _ in range(50):  # failures keep coming at 6.5 s
        s.record(torch.ones(4000, dtype=torch.bool)[:10].repeat(400), torch.full((4000,), 325))
        s.advance()
    p = s.probabilities()[0]
    assert p.argmax() in (5, 6) and p[6] > 0.3 and p[7:].max() < p[4] and s.entropy() < 0.9
    starts = s.sample(4000)
    assert ((starts >= 250) & (starts < 350)).float().mean() > 0.5 and (starts <= 499).all()


def test_exact_resume_from_state_dict():
    g = torch.Generator().manual_seed(5)
    actions = [0.3 * torch.randn(N, 20, generator=g) for _ in range(60)]
    a = make()
    a.reset(seed=7)
    for x in actions[:30]:
        a.step(x)
    buffer = io.BytesIO()
    torch.save(a.state_dict(), buffer)
    expected = [a.step(x)[:2] for x in actions[30:]]
    b = make()
    b.reset(seed=99)
    buffer.seek(0)
    b.load_state_dict(torch.load(buffer, weights_only=True))
    got = [b.step(x)[:2] for x in actions[30:]]
    for (o1, r1), (o2, r2) in zip(expected, got, strict=True):
        assert torch.equal(o1["policy"], o2["policy"]) and torch.equal(r1, r2)
    assert torch.equal(a.sampler.failures, b.sampler.failures)


@pytest.mark.parametrize("fields, message", [
    ({"clips": ()}, r"^config error: env\.clips is empty; give one or more motion clips"),
    ({"clips": ("keyframes:cartwheel",)}, r"no keyframe preset 'cartwheel'; presets: squat_wave"),
    ({"anchor_body": "head"}, r"env\.anchor_body='head' is not a body of robot humanoid; its bodies: pelvis, "),
    ({"bodies": ("hand_.*",)}, r"env\.bodies entry 'hand_\.\*' matches no body of robot humanoid"),
])
def test_bad_config_is_one_line(fields, message):
    with pytest.raises(UserError, match=message) as e:
        make(num_envs=2, **fields)
    assert "\n" not in str(e.value)


def test_a_clip_whose_joints_the_robot_lacks_is_one_line(tmp_path):
    clip = make_clip(Keyframes("k", (Key(0.0), Key(0.5))), build_tracking(HUMANOID))
    renamed = dataclasses.replace(clip, joint_names=("tail_joint", *clip.joint_names[1:]))
    path = motion.save(renamed, tmp_path / "tail.npz")
    with pytest.raises(UserError, match=r"tail\.npz: the robot has no joint\(s\) tail_joint of the clip") as e:
        make(num_envs=2, clips=(str(path),))
    assert "\n" not in str(e.value)


def test_a_users_robot_file_tracks_its_own_clip(tmp_path):
    spec = biped_spec(tmp_path)
    robot = build_tracking(spec)
    clip = make_clip(Keyframes("dip", (Key(0.0), Key(1.0, ((".*_knee_joint", 0.8), (".*_hip_pitch_joint", -0.4),
                                                            (".*_ankle_pitch_joint", -0.4))), Key(2.0))), robot)
    clip_path = motion.save(clip, tmp_path / "dip.npz")
    robot_file = write(tmp_path, "biped_robot.py", f'''
from pathlib import Path
from configs.track import track_task
from envs.tasks.track import TrackEnvConfig
from tests.robot_models import biped_spec

ROBOT = biped_spec(Path({str(tmp_path)!r}))
track = track_task("biped-track", ROBOT, TrackEnvConfig(clips=({str(clip_path)!r},)))
''')
    task = get_task(f"{robot_file}:track")
    cfg = dataclasses.replace(task.default_config().env, num_envs=4, backend="native")
    env = task.make_env(cfg, torch.device("cpu"))
    assert isinstance(env, TrackEnv) and env.num_joints == robot.num_joints == 15  # held joints trained too
    env.reset(seed=0)
    for _ in range(5):
        obs, rew, *_ = env.step(torch.zeros(4, 15))
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()


def test_observation_export_and_sim2sim_observation_agree():
    env = make(num_envs=1, noise=dataclasses.replace(HUMANOID_TRACK_ENV.noise, scale=0.0))
    meta = policy_metadata("humanoid-track", 0, _policy(env), env.export_metadata())
    assert [n for n, _ in meta["obs_layout"]] == list(TERM_NAMES)
    tracker = PlainMujocoTracker(meta)
    obs = env.reset(seed=2)
    g = torch.Generator().manual_seed(2)
    for _ in range(10):
        r = env.physics.read()
        tracker.ref, tracker.frame = tracker.refs[0], int(env.state.frame[0])
        tracker.data.qpos[:], tracker.data.qvel[:] = r.qpos[0].double().numpy(), r.qvel[0].double().numpy()
        mujoco.mj_kinematics(tracker.model, tracker.data)
        tracker.last_action = env.state.last_actions[0].double().numpy()
        assert np.abs(tracker.observe() - obs["policy"][0].double().numpy()).max() < 2e-4
        obs = env.step(0.2 * torch.randn(1, 20, generator=g))[0]


def _policy(env: TrackEnv) -> ActorCritic:
    torch.manual_seed(0)
    return ActorCritic(env.obs_dims["policy"], None, env.action_spec, track_config().policy).eval()


def test_export_and_sim2sim_from_the_onnx_file_alone(tmp_path):
    env = make(num_envs=1)
    policy = _policy(env)
    path = tmp_path / "track.onnx"
    export_onnx(policy, path, policy_metadata("humanoid-track", 3, policy, env.export_metadata()))
    meta = OnnxPolicy(path).metadata
    assert schema.problems(meta) == [] and sorted(meta) == TRACK_KEYS and schema.family(meta) == "track"
    assert meta["format"] == "legged-mjx-policy/2.4" and meta["motion"]["anchor_body"] == "torso"
    (entry,) = meta["motion_clips"]
    assert entry["name"] == "squat_wave" and entry["frames"] == 476 and entry["source"] == "keyframes:squat_wave"
    assert entry["sha256"] == env.played[0].sha256
    out = sim2sim.run(path, episodes=2, seed=0)
    assert out["task"] == "humanoid-track" and out["runtime"] == "onnxruntime in plain MuJoCo"
    assert out["episodes"] + out["diverged_episodes"] == 2 and 0.0 <= out["fall_rate"] <= 1.0
    assert out["joint_pos_error"] >= 0.0 and out["anchor_pos_error"] >= 0.0


def test_play_evaluates_a_tracking_checkpoint(tmp_path, capsys):
    cfg = get_task("humanoid-track").default_config()
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native"),
                              runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=1),
                              algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(dump_yaml(cfg))
    OnPolicyRunner(TrackEnv(cfg.env, HUMANOID), cfg, task="humanoid-track", run_dir=run, quiet=True).learn()
    out = tmp_path / "eval.json"
    assert play.main(["--checkpoint", str(run), "--episodes", "2", "--json", str(out)]) == 0
    metrics = json.loads(out.read_text())
    assert {"joint_pos_error", "anchor_pos_error", "anchor_ori_error", "body_pos_error", "fall_rate",
            "clip_end"} <= set(metrics) and metrics["episodes"] + metrics["diverged_episodes"] == 2
    assert "joint_pos_error" in capsys.readouterr().out
