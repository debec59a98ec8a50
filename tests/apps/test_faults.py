"""Faults the trainer must survive or stop cleanly on: NaN physics, NaN learning, corrupt newest checkpoints,
SIGKILL at random moments (also during saves), SIGINT (more signals: tests/apps/test_signals.py), and memory growth
over many iterations."""

from __future__ import annotations

import dataclasses
import errno
import math
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from configs.catalog import get_task
from configs.quadruped import FLAT_QUADRUPED
from contract.errors import TrainingFault
from envs.tasks.locomotion import LocomotionEnv
from fault_injection import harness
from fault_injection.harness import (
    CLI_CASES,
    NanInjector,
    kill_round,
    make_checkpoint,
    nan_learning_run,
    one_line_error,
    rss_growth_mb,
    run_cli,
)
from fault_injection.signals import clean_stop, signal_round
from rl_core import checkpoint as ckpt
from rl_core.config import AlgorithmConfig
from rl_core.ppo import ppo_loss
from rl_core.runner import OnPolicyRunner
from tests.helpers import make_runner, tiny_cartpole
from tests.rl_core.test_ppo import make_batch, policy_of

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------- NaN physics
def _small_quadruped():
    cfg = get_task("quadruped-flat").default_config()
    return dataclasses.replace(
        cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native"),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=6, max_iterations=3, device="cpu"),
        algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))


def test_nan_physics_is_reset_counted_and_not_learned_from():
    cfg = _small_quadruped()
    env = NanInjector(LocomotionEnv(cfg.env, FLAT_QUADRUPED), ids=[1, 5], at=2)
    runner = OnPolicyRunner(env, cfg, task="quadruped-flat", quiet=True)
    runner.obs = runner.env.reset(seed=0)
    runner.collect()
    weights = runner.storage.weights
    assert weights[2, 1] == 0 and weights[2, 5] == 0  # the diverged transitions
    assert weights.sum() == weights.numel() - 2  # every other one is learned from
    assert runner.rollout_log["invalid_transitions"].item() == 2
    assert runner.storage.terminated[2, 1] and runner.storage.terminated[2, 5]
    assert torch.isfinite(runner.env.env.physics.read().qpos).all()  # reset, not left broken
    runner.learn()  # training goes on
    assert runner.iteration == 3
    assert all(torch.isfinite(p).all() for p in runner.policy.parameters())


def test_zero_weight_samples_do_not_change_the_loss():
    policy = policy_of()
    cfg = AlgorithmConfig(normalize_advantage_per_minibatch=True)
    full = make_batch(policy, n=64)
    valid = {k: v[:40] for k, v in full.items()}
    masked = {k: v.clone() for k, v in full.items()}
    masked["weights"][40:] = 0.0
    masked["advantages"][40:] = 1e6  # garbage that would dominate every mean
    masked["returns"][40:] = -1e6
    loss_valid, m_valid = ppo_loss(policy, valid, cfg)
    loss_masked, m_masked = ppo_loss(policy, masked, cfg)
    torch.testing.assert_close(loss_masked, loss_valid)
    for k in ("value_loss", "surrogate_loss", "kl"):
        torch.testing.assert_close(m_masked[k], m_valid[k])


# ------------------------------------------------------------------------------------------ NaN learning
class NanRewardsAfter:
    """Wraps a Gymnasium VecEnv: rewards are multiplied by ``factor`` (NaN, or a huge finite number) from step
    ``at`` on."""

    def __init__(self, env, at: int, factor: float = float("nan")):
        self.env, self.at, self.t, self.factor = env, at, 0, factor
        self.num_envs, self.obs_dims = env.num_envs, env.obs_dims
        self.action_spec, self.device = env.action_spec, env.device

    def reset(self, seed=None):
        return self.env.reset(seed)

    def step(self, actions):
        obs, rew, term, trunc, info = self.env.step(actions)
        self.t += 1
        return obs, rew * self.factor if self.t > self.at else rew, term, trunc, info

    def close(self):
        self.env.close()


def test_nonfinite_loss_skips_the_step_and_stops_without_saving(tmp_path):
    cfg = tiny_cartpole(iterations=10)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=2))
    runner = make_runner(cfg, run_dir=tmp_path)
    steps = cfg.runner.num_steps_per_env
    # iterations 1-2 are clean; from 3 on the rewards are finite but so large that the losses overflow (a
    # non-finite reward never reaches the learner: see the next test)
    runner.env = NanRewardsAfter(runner.env, at=2 * steps, factor=1e30)
    runner.learn(2)
    before = {k: v.clone() for k, v in runner.policy.named_parameters()}
    with pytest.raises(TrainingFault) as e:
        runner.learn()
    message = str(e.value)
    assert message.startswith("training stopped at iteration 3: non-finite loss or gradient in ")
    assert message.endswith(f"last good checkpoint: {tmp_path / 'checkpoints' / 'model_2.pt'}")
    for k, v in runner.policy.named_parameters():
        torch.testing.assert_close(v, before[k])  # every optimizer step of the faulty update was skipped
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["model_2.pt"]


def test_nonfinite_rewards_are_masked_and_a_sustained_share_stops_the_run(tmp_path):
    """The learner's last line of defence (any env, here a Gym task): NaN rewards never reach the storage, the
    episode statistics or the loss; a share above runner.divergence_limit over the window stops the run."""
    cfg = tiny_cartpole(iterations=20)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=4, divergence_window=3,
                                                              divergence_limit=0.5))
    runner = make_runner(cfg, run_dir=tmp_path)
    runner.env = NanRewardsAfter(runner.env, at=2 * cfg.runner.num_steps_per_env)  # NaN from iteration 3 on
    runner.learn(2)
    returns = list(runner.episodes.recent_returns)
    runner.learn(1)
    storage = runner.storage
    assert (storage.weights == 0).all()  # every transition of iteration 3 masked out of the loss
    assert torch.isfinite(storage.rewards).all() and (storage.rewards == 0).all()
    assert torch.isfinite(storage.returns).all() and torch.isfinite(storage.advantages).all()
    assert runner.rollout_log["invalid_transitions"].item() == storage.weights.numel()
    assert all(math.isfinite(r) for r in runner.episodes.recent_returns)  # no episode with a NaN return was counted
    assert list(runner.episodes.recent_returns)[: len(returns)] == returns
    with pytest.raises(TrainingFault) as e:
        runner.learn()
    message = str(e.value)
    # iterations 2, 3 and 4 in the window: 2 of 3 fully diverged (66.67% > 50%)
    assert message.startswith("training stopped at iteration 4: 66.67% of transitions diverged over the last 3 "
                              "iterations (runner.divergence_limit=0.5); usual causes: too few solver "
                              "iterations"), message
    # model_3.pt: written at the end of learn(1); the stop comes before iteration 4's save
    assert message.endswith(f"last good checkpoint: {tmp_path / 'checkpoints' / 'model_3.pt'}")
    assert all(torch.isfinite(p).all() for p in runner.policy.parameters())


def test_the_divergence_stop_saves_a_checkpoint_first_when_none_was(tmp_path):
    cfg = tiny_cartpole(iterations=20)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=100, divergence_window=1,
                                                              divergence_limit=0.0))
    runner = make_runner(cfg, run_dir=tmp_path)
    runner.env = NanRewardsAfter(runner.env, at=3)  # a few NaN rewards in the first iteration
    with pytest.raises(TrainingFault, match="last good checkpoint: .*model_1.pt$"):
        runner.learn()
    assert runner.iteration == 1
    ckpt.load(tmp_path / "checkpoints" / "model_1.pt")  # saved, and it verifies


def test_nonfinite_parameters_are_never_saved(tmp_path):
    runner = make_runner(tiny_cartpole(iterations=1))
    with torch.no_grad():
        next(runner.policy.actor.parameters())[0, 0] = float("inf")
    with pytest.raises(TrainingFault, match="non-finite policy parameters"):
        runner.save(tmp_path / "model_1.pt")
    assert not (tmp_path / "model_1.pt").exists()


def test_train_reports_a_sustained_diverged_share_in_one_line(tmp_path):
    proc = nan_learning_run(tmp_path, nan_after=200)  # NaN rewards: masked, counted as diverged
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line, line
    assert re.fullmatch(r"error: training stopped at iteration (\d+): [\d.]+% of transitions diverged over the last 10 "
                        r"iterations \(runner.divergence_limit=0.01\); usual causes: .*solver iterations.*timestep.*"
                        r"armature.*gains.*; last good checkpoint: .*model_(\d+)\.pt", line), line
    it, last = map(int, re.search(r"iteration (\d+):.*model_(\d+)\.pt", line).groups())
    assert last == it - 1
    for path in (tmp_path / "checkpoints").glob("model_*.pt"):
        ckpt.load(path)  # whatever was saved verifies (finite)


def test_train_reports_a_learner_fault_in_one_line(tmp_path):
    proc = nan_learning_run(tmp_path, nan_after=200, reward="1e30")  # finite rewards whose losses overflow
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line, line
    assert re.fullmatch(r"error: training stopped at iteration (\d+): non-finite loss or gradient in \d+ of \d+ "
                        r"minibatch updates \(their optimizer steps were skipped\); nothing was saved after it; "
                        r"last good checkpoint: .*model_(\d+)\.pt", line), line
    it, last = map(int, re.search(r"iteration (\d+):.*model_(\d+)\.pt", line).groups())
    assert last == it - 1
    for path in (tmp_path / "checkpoints").glob("model_*.pt"):
        ckpt.load(path)  # whatever was saved verifies (finite)
    assert not (tmp_path / "checkpoints" / f"model_{it}.pt").exists()


# ---------------------------------------------------------------------------------------- checkpoints
def test_resume_picks_the_newest_checkpoint_that_verifies(tmp_path, capsys):
    runner = make_runner(tiny_cartpole(iterations=2), run_dir=tmp_path)
    runner.learn()
    folder = tmp_path / "checkpoints"
    good = folder / "model_2.pt"
    blob = good.read_bytes()
    (folder / "model_3.pt").write_bytes(blob[: len(blob) // 3])  # torn write
    data = torch.load(good, weights_only=True)
    weight = data["policy"]["actor.0.weight"]
    flipped = bytearray(blob)
    at = flipped.find(weight[3].numpy().tobytes())
    flipped[at + 1] ^= 0x40  # one bit of one weight: torch itself loads this without complaint
    (folder / "model_4.pt").write_bytes(bytes(flipped))
    assert not torch.equal(torch.load(folder / "model_4.pt", weights_only=True)["policy"]["actor.0.weight"], weight)
    weight[0, 0] = float("nan")
    ckpt.save_atomic({k: v for k, v in data.items() if k != "checksum"}, folder / "model_5.pt")  # valid sum, NaN inside
    path, loaded = ckpt.load_newest(tmp_path)
    assert path == good and loaded["iteration"] == 2
    err = capsys.readouterr().err
    assert "model_5.pt holds non-finite" in err and "model_4.pt fails its checksum" in err
    assert "model_3.pt is corrupt" in err


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_at_most_one_save_interval(tmp_path):
    """Kill a training process (saving every iteration) 6 times, every other time as soon as a save's temporary file
    appears; every time the newest checkpoint verifies, is at most one iteration behind the last one logged, and the
    next round resumes from it."""
    rng = random.Random(0)
    run = tmp_path / "run"
    for round_ in range(6):
        r = kill_round(run, resume=round_ > 0, rng=rng, during_save=round_ % 2 == 1)
        assert r["logged"] - 1 <= r["checkpoint"] <= r["logged"], (round_, r)
    # The TensorBoard curves of the killed processes are on disk up to the last logged iteration.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps = set()
    for events in run.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        if "Loss/value" in acc.Tags()["scalars"]:
            steps |= {e.step for e in acc.Scalars("Loss/value")}
    assert max(steps) >= r["env_steps"]
    # A last, uninterrupted resume finishes and clears the temporary files that killed saves left.
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--resume", str(run), "--quiet", "--max-iterations",
                           str(r["checkpoint"] + 1)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ckpt.load_newest(run)[1]["iteration"] == r["checkpoint"] + 1
    assert not list((run / "checkpoints").glob(".*.tmp"))


def test_sigint_saves_a_final_checkpoint_and_exits_cleanly(tmp_path):
    """The child starts with SIGINT at its default disposition and must exit within 60 s of the signal
    (tests/apps/test_signals.py: SIGTERM, SIGUSR1, SIGINT ignored at start, signals during saves, torchrun)."""
    run = tmp_path / "run"
    r = signal_round(run, signal.SIGINT)
    assert clean_stop(r, signal.SIGINT, run), r  # 130, one line, the checkpoint of the last iteration logged


@pytest.mark.parametrize(("script", "argv", "expected"), CLI_CASES, ids=[" ".join([c[0], *c[1]]) for c in CLI_CASES])
def test_bad_cli_values_fail_in_one_line_before_any_env(cli_checkpoint, tmp_path, script, argv, expected):
    argv = [a.format(ckpt=cli_checkpoint, junk=cli_checkpoint.with_name("junk.onnx")) for a in argv]
    result = run_cli(script, argv, tmp_path)
    assert one_line_error(result, expected), result


@pytest.fixture(scope="module")
def cli_checkpoint(tmp_path_factory):
    run = make_checkpoint(tmp_path_factory.mktemp("cli"))
    (run / "checkpoints" / "junk.onnx").write_bytes(b"not an onnx file")
    return run / "checkpoints" / "model_2.pt"


# -------------------------------------------------------------------------------------------- memory
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
def test_memory_stays_flat_over_many_iterations():
    growth = rss_growth_mb(warmup=100, iterations=200)
    assert growth < 15.0, f"RSS grew by {growth:.1f} MiB over 200 iterations"


# ------------------------------------------------------------------------------------------- OS faults
@pytest.mark.parametrize("error,reason", [
    (harness.FULL_DISK, "could not write"),
    (PermissionError(errno.EROFS, "Read-only file system"), "Read-only file system"),
    (OSError(errno.ENOSPC, "No space left on device"), "No space left on device")])
def test_a_failed_save_stops_in_one_line_and_keeps_earlier_checkpoints(tmp_path, error, reason):
    from fault_injection.harness import failing_save_round

    r = failing_save_round(tmp_path / "run", error, after_saves=2)
    msg = r["message"]
    assert msg.startswith("training stopped at iteration 3: checkpoint error: could not write ") and reason in msg
    assert "\n" not in msg and msg.endswith(f"last good checkpoint: {tmp_path / 'run' / 'checkpoints' / 'model_2.pt'}")
    assert r["checkpoint"] == 2 and r["leftovers"] == 0  # the newest file verifies; no half-written temporary left


def test_a_full_disk_during_training_is_one_line_and_the_run_resumes_elsewhere(tmp_path):
    from fault_injection.harness import disk_full_round

    try:
        r = disk_full_round(tmp_path / "disk", size_kib=1024)
    except OSError as e:  # not root, or no tmpfs here
        pytest.skip(str(e))
    lines = r["stderr"].strip().splitlines()
    assert r["code"] == 2 and "Traceback" not in r["stderr"], r["stderr"]
    assert lines[-1].startswith("error: training stopped at iteration ") and "last good checkpoint: " in lines[-1]
    assert r["leftovers"] == 0 and r["checkpoint"] >= 1
    assert r["resume_code"] == 0, r["resume_stderr"]


def test_an_unreadable_checkpoint_is_one_line(tmp_path, monkeypatch):
    import torch

    from contract.errors import CheckpointError
    from rl_core import checkpoint as ckpt

    f = tmp_path / "model_1.pt"
    f.write_bytes(b"x")

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(torch, "load", denied)
    with pytest.raises(CheckpointError, match=f"{f} could not be read: Permission denied$"):
        ckpt.load(f)


def test_play_keeps_the_metrics_when_the_json_cannot_be_written(cli_checkpoint, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(root / "play.py"), "--checkpoint", str(cli_checkpoint), "--episodes", "2",
                        "--json", str(blocker / "m.json")], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "could not be written" in r.stderr, r.stderr
    assert '"mean_episode_return"' in r.stdout  # the evaluation is on screen, not lost
