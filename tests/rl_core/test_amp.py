"""Adversarial motion priors (``algorithm.name=amp``, ``rl_core/amp.py``): the style reward and the discriminator's
loss, the locomotion env's AMP observation of its own states and of a clip's frames, one-line refusals, a short
training that logs task and style rewards apart, an exact resume of discriminator and normalizer, and an export
without the discriminator."""

from __future__ import annotations

import dataclasses

import onnx
import pytest
import torch

from configs.catalog import get_task
from configs.quadruped import FLAT_QUADRUPED
from contract import motion
from contract.errors import ConfigError, UserError
from envs.motion.keyframes import Key, Keyframes, make_clip
from envs.motion.robot import build_tracking
from envs.robots.humanoid import HUMANOID
from envs.robots.quadruped import QUADRUPED
from envs.tasks.locomotion import LocomotionEnv
from rl_core import checkpoint as ckpt
from rl_core.config import AmpConfig
from rl_core.env_api import MotionPrior
from rl_core.export import export_onnx, policy_metadata
from rl_core.modules.discriminator import Discriminator, discriminator_loss, style_reward
from rl_core.runner import OnPolicyRunner

BEND = ((".*_calf_joint", -1.8), (".*_thigh_joint", 1.0))


@pytest.fixture(scope="module")
def clip_path(tmp_path_factory):
    """A quadruped keyframe clip (crouch twice), written here."""
    clip = make_clip(Keyframes("bob", (Key(0.0), Key(0.5, BEND), Key(1.0), Key(1.5, BEND), Key(2.0))),
                     build_tracking(QUADRUPED))
    return str(motion.save(clip, tmp_path_factory.mktemp("clips") / "bob.npz"))


def small_config(clip: str | None, name: str = "amp"):
    cfg = get_task("quadruped-flat").default_config()
    return dataclasses.replace(
        cfg, env=dataclasses.replace(cfg.env, num_envs=16, backend="native", amp_clips=(clip,) if clip else ()),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=3, device="cpu", save_interval=100,
                                   torch_threads=1),
        algorithm=dataclasses.replace(cfg.algorithm, name=name, num_learning_epochs=2, num_mini_batches=2))


def runner(clip: str | None, name: str = "amp") -> OnPolicyRunner:
    cfg = small_config(clip, name)
    return OnPolicyRunner(LocomotionEnv(cfg.env, FLAT_QUADRUPED), cfg, task="quadruped-flat", quiet=True)


def test_style_reward_is_one_at_the_reference_logit_and_zero_at_the_policys():
    assert style_reward(torch.tensor([1.0, -1.0, 3.0, 0.0, -4.0])).tolist() == [1.0, 0.0, 0.0, 0.75, 0.0]


def test_the_discriminator_learns_to_tell_reference_from_policy():
    torch.manual_seed(0)
    disc = Discriminator(3, (32, 32))
    opt = torch.optim.Adam(disc.net.parameters(), lr=3e-3)
    for _ in range(60):
        expert = (torch.randn(128, 3) + 2.0, torch.randn(128, 3) + 2.0)
        policy = (torch.randn(128, 3), torch.randn(128, 3))
        disc.normalizer.update(torch.cat([expert[0], policy[0]]))
        loss, metrics = discriminator_loss(disc, policy, torch.ones(128), expert, 10.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert metrics["amp_expert_d"] > 0.5 and metrics["amp_policy_d"] < -0.5 and metrics["amp_grad_penalty"] >= 0
    # invalid policy samples (weight 0) are left out
    _, m = discriminator_loss(disc, (torch.full((4, 3), 2.0), torch.full((4, 3), 2.0)), torch.zeros(4), expert, 0.0)
    assert m["amp_policy_d"] == 0.0


def test_the_env_judges_its_states_and_the_clips_frames_alike(clip_path):
    cfg = small_config(clip_path).env
    env = LocomotionEnv(dataclasses.replace(cfg, num_envs=2), FLAT_QUADRUPED)
    assert isinstance(env, MotionPrior) and env.amp_obs_dim == 2 * 12 + 10 + 3 * 4
    plain = LocomotionEnv(dataclasses.replace(cfg, num_envs=2, amp_clips=()), FLAT_QUADRUPED)
    assert not isinstance(plain, MotionPrior)
    env.reset(seed=0)
    s, s_next = env.amp_reference(5, torch.Generator().manual_seed(0))
    assert s.shape == s_next.shape == (5, env.amp_obs_dim)
    from envs.motion.replay import replay
    from envs.motion.resample import resample

    ref = replay(env.model, resample(motion.from_bytes(open(clip_path, "rb").read(), clip_path), 50.0), (), "x")
    qpos, qvel = torch.tensor(ref.qpos[:2], dtype=torch.float32), torch.tensor(ref.qvel[:2], dtype=torch.float32)
    env.physics.reset(torch.ones(2, dtype=torch.bool), qpos, qvel)
    ours = env.amp_observation()
    assert torch.allclose(ours[0], env.amp(qpos, qvel)[0], atol=1e-5)
    base_height, feet = ours[:, 24], ours[:, -12:].view(2, 4, 3)
    assert torch.allclose(base_height, qpos[:, 2]) and (feet[:, :, 2] < -0.2).all()  # feet below the base
    _, _, _, _, info = env.step(torch.zeros(2, 12))
    assert info["amp_obs"].shape == (2, env.amp_obs_dim) and torch.isfinite(info["amp_obs"]).all()


def test_a_biped_with_held_arms_is_judged_on_its_trained_joints_and_two_feet(tmp_path):
    """humanoid-flat's AMP (docs/motion.md): a clip of every joint, the arms included, is judged on the 12 leg
    joints the policy drives, the base and the two feet; the reference transitions are the clip's frames."""
    squat = ((".*_knee_joint", 1.0), (".*_hip_pitch_joint", -0.5), (".*_shoulder_pitch_joint", -0.8))
    clip = make_clip(Keyframes("squat", (Key(0.0), Key(0.5, squat), Key(1.0))), build_tracking(HUMANOID))
    path = str(motion.save(clip, tmp_path / "squat.npz"))
    cfg = get_task("humanoid-flat").default_config().env
    env = LocomotionEnv(dataclasses.replace(cfg, num_envs=2, backend="native", amp_clips=(path,)), HUMANOID)
    assert env.amp_obs_dim == 2 * 12 + 10 + 3 * 2
    env.reset(seed=0)
    s, s_next = env.amp_reference(64, torch.Generator().manual_seed(0))
    assert s.shape == s_next.shape == (64, env.amp_obs_dim) and torch.isfinite(s).all()
    knees = [env.robot.joint_names.index(n) for n in ("left_knee_joint", "right_knee_joint")]
    assert s[:, knees].max() > 0.5  # the squat's knees (minus the default 0.3), not the arms' angles
    _, _, _, _, info = env.step(torch.zeros(2, 12))
    assert info["amp_obs"].shape == (2, env.amp_obs_dim)


def test_amp_without_clips_or_with_bad_settings_is_one_line():
    with pytest.raises(ConfigError, match=r"algorithm\.name='amp' is not allowed; expected ppo for this task: its "
                                          r"env offers no AMP observation"):
        runner(None)
    with pytest.raises(UserError, match=r"algorithm\.amp\.style_weight=-1\.0 is not allowed"):
        AmpConfig(style_weight=-1.0)
    with pytest.raises(UserError, match=r"motion clip nowhere\.npz does not exist"):
        cfg = dataclasses.replace(small_config(None).env, num_envs=2, amp_clips=("nowhere.npz",))
        LocomotionEnv(cfg, FLAT_QUADRUPED)


def test_a_short_training_logs_task_and_style_apart_and_resumes_exactly(clip_path, tmp_path):
    straight = runner(clip_path)
    assert straight.learn()["iterations"] == 3
    first = runner(clip_path)
    first.learn(num_iterations=2)
    data = ckpt.load(first.save(tmp_path / "model_2.pt"))
    assert set(data["algorithm"]["amp"]) == {"discriminator", "optimizer"}
    assert "normalizer.count" in data["algorithm"]["amp"]["discriminator"]
    resumed = runner(clip_path)
    resumed.load_state_dict(data)
    resumed.learn()
    for a, b in ((straight.policy.state_dict(), resumed.policy.state_dict()),
                 (straight.alg.discriminator.state_dict(), resumed.alg.discriminator.state_dict())):
        assert all(torch.equal(a[k], b[k]) for k in a)
    resumed.collect()
    scalars = resumed.iteration_scalars({}, resumed.alg.update(), torch.tensor(1.0))
    assert {"AMP/style_reward", "AMP/task_reward", "AMP/disc_loss", "AMP/grad_penalty", "AMP/expert_d",
            "AMP/policy_d"} <= set(scalars) and 0.0 <= scalars["AMP/style_reward"] <= 1.0
    meta = policy_metadata("quadruped-flat", 4, resumed.policy, resumed.env.export_metadata())
    export_onnx(resumed.policy, tmp_path / "p.onnx", meta)  # the policy alone: no discriminator in the file
    width = 2 * resumed.env.amp_obs_dim
    shapes = {tuple(t.dims) for t in onnx.load(str(tmp_path / "p.onnx")).graph.initializer}
    assert not {(256, width), (width, 256)} & shapes and not any(k.startswith("amp") for k in meta)
    with pytest.raises(UserError, match="algorithm.name=amp"):
        runner(clip_path, "ppo").load_state_dict(data)
