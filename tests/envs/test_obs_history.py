"""An observation history (``env.obs_history``): the policy reads its last frames, oldest first, zeros before an
episode's first; the past frames are task state; the mirror acts on each frame."""

from __future__ import annotations

import pytest
import torch

from contract.errors import UserError
from envs.robots.quadruped import QUADRUPED
from envs.tasks.locomotion import LocomotionEnv
from envs.tasks.locomotion.config import LocomotionEnvConfig
from rl_core.env_api import StackedObservations, Symmetric

N = 4


def _env(frames: int, **changes) -> LocomotionEnv:
    cfg = LocomotionEnvConfig(num_envs=N, backend="native", physics_threads=1, obs_history=frames, **changes)
    return LocomotionEnv(cfg, QUADRUPED)


def test_the_observation_is_the_last_frames_oldest_first_with_zeros_before_the_first():
    env = _env(3, policy_exclude=("base_lin_vel",))
    assert isinstance(env, StackedObservations) and env.obs_frames == 3
    F = env.history.width
    assert F == 45 and env.obs_dims == {"policy": 135, "critic": 48}
    o0 = env.reset(seed=0)["policy"]
    assert torch.equal(o0[:, :2 * F], torch.zeros(N, 2 * F)) and o0[:, 2 * F:].abs().sum() > 0
    o1 = env.step(torch.zeros(N, 12))[0]["policy"]
    o2 = env.step(torch.zeros(N, 12))[0]["policy"]
    assert torch.equal(o1[:, :F], torch.zeros(N, F)) and torch.equal(o1[:, F:2 * F], o0[:, 2 * F:])
    assert torch.equal(o2[:, :F], o0[:, 2 * F:]) and torch.equal(o2[:, F:2 * F], o1[:, 2 * F:])
    assert torch.equal(env.state.past_frames, o2[:, F:])
    mask = torch.tensor([True, False, True, False])
    env.reset_envs(mask)  # a reset forgets the episode's frames
    assert env.state.past_frames[mask].abs().sum() == 0 and torch.equal(env.state.past_frames[~mask], o2[~mask, F:])


def test_one_frame_is_the_observation_as_before():
    env = _env(1)
    assert env.obs_dims == {"policy": 48} and env.state.past_frames.shape == (N, 0)


def test_the_mirror_mirrors_each_frame():
    env, single = _env(2), _env(1)
    assert isinstance(env, Symmetric) and isinstance(single, Symmetric)
    obs = torch.randn(5, 96)
    expected = torch.cat([single.mirror_obs(obs[:, :48]), single.mirror_obs(obs[:, 48:])], dim=1)
    assert torch.equal(env.mirror_obs(obs), expected)


def test_a_bad_history_length_is_one_line():
    with pytest.raises(UserError, match="env.obs_history"):
        LocomotionEnvConfig(obs_history=0)


@pytest.mark.slow
def test_an_export_reads_one_frame_and_carries_the_past_ones(tmp_path):
    """ONNX and TorchScript (about 40 s on a loaded 2-core CPU; tests/deploy/test_runtime.py exports a history policy of
    the quadruped in the default suite)."""
    from rl_core.config import PolicyConfig
    from rl_core.env_api import ActionSpec
    from rl_core.export import ExportError, export_jit, export_onnx, policy_metadata
    from rl_core.modules.actor_critic import ActorCritic

    torch.manual_seed(0)
    policy = ActorCritic(3 * 10, 12, ActionSpec(discrete=False, n=4), PolicyConfig()).eval()
    policy.update_normalizers(torch.randn(64, 30) * 2 + 1, torch.randn(64, 12))
    meta = policy_metadata("toy", 0, policy, {}, frames=3)
    assert meta["obs_dim"] == 10 and meta["recurrent"]["memory"] == "history" and meta["recurrent"]["layers"] == 2
    assert export_onnx(policy, tmp_path / "p.onnx", meta) <= 1e-5  # checked over a 200-step sequence inside
    assert export_jit(policy, tmp_path / "p.pt", meta) <= 1e-5
    with pytest.raises(ExportError, match="multiple of 4"):
        policy_metadata("toy", 0, policy, {}, frames=4)
