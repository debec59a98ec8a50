"""Faults the trainer must survive or stop cleanly on: NaN physics, NaN learning, corrupt newest checkpoints,
SIGKILL at random moments (also during saves), SIGINT, and memory growth over many iterations."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from configs.quadruped import quadruped_flat
from envs.tasks.locomotion import LocomotionEnv
from rl_core import checkpoint as ckpt
from rl_core.config import PPOConfig
from rl_core.errors import TrainingFault
from rl_core.ppo import ppo_loss
from rl_core.runner import OnPolicyRunner
from tests.helpers import make_runner, tiny_cartpole
from tests.test_ppo import make_batch, policy_of

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------- NaN physics
class NanInjector:
    """Wraps a LocomotionEnv and writes NaN velocities into envs ``ids`` before step ``at`` of the run."""

    def __init__(self, env: LocomotionEnv, ids: list[int], at: int):
        self.env, self.ids, self.at, self.t = env, ids, at, 0
        self.num_envs, self.obs_dims, self.action_spec, self.device = env.num_envs, env.obs_dims, env.action_spec, env.device

    def reset(self, seed=None):
        return self.env.reset(seed)

    def step(self, actions):
        if self.t == self.at:
            mask = torch.zeros(self.num_envs, dtype=torch.bool)
            mask[self.ids] = True
            self.env.physics.set_velocity(mask, torch.full((self.num_envs, self.env.model.nv), float("nan")))
        self.t += 1
        return self.env.step(actions)

    def close(self):
        self.env.close()


def _small_quadruped():
    cfg = quadruped_flat()
    return dataclasses.replace(
        cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native"),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=6, max_iterations=3, device="cpu"),
        algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))


def test_nan_physics_is_reset_counted_and_not_learned_from():
    cfg = _small_quadruped()
    env = NanInjector(LocomotionEnv(cfg.env), ids=[1, 5], at=2)
    runner = OnPolicyRunner(env, cfg, task="quadruped-flat", quiet=True)
    runner.obs = runner.env.reset(seed=0)
    runner.collect()
    weights = runner.storage.weights
    assert weights[2, 1] == 0 and weights[2, 5] == 0  # the diverged transitions
    assert weights.sum() == weights.numel() - 2  # every other one is learned from
    assert runner._invalid_count.item() == 2
    assert runner.storage.terminated[2, 1] and runner.storage.terminated[2, 5]
    assert torch.isfinite(runner.env.env.physics.read().qpos).all()  # reset, not left broken
    runner.learn()  # training goes on
    assert runner.iteration == 3
    assert all(torch.isfinite(p).all() for p in runner.policy.parameters())


def test_zero_weight_samples_do_not_change_the_loss():
    policy = policy_of()
    cfg = PPOConfig(normalize_advantage_per_minibatch=True)
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
    """Wraps a Gymnasium VecEnv: rewards become NaN from step ``at`` on."""

    def __init__(self, env, at: int):
        self.env, self.at, self.t = env, at, 0
        self.num_envs, self.obs_dims, self.action_spec, self.device = env.num_envs, env.obs_dims, env.action_spec, env.device

    def reset(self, seed=None):
        return self.env.reset(seed)

    def step(self, actions):
        obs, rew, term, trunc, info = self.env.step(actions)
        self.t += 1
        return obs, rew * float("nan") if self.t > self.at else rew, term, trunc, info

    def close(self):
        self.env.close()


def test_nonfinite_loss_skips_the_step_and_stops_without_saving(tmp_path):
    cfg = tiny_cartpole(iterations=10)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=2))
    runner = make_runner(cfg, run_dir=tmp_path)
    steps = cfg.runner.num_steps_per_env
    runner.env = NanRewardsAfter(runner.env, at=2 * steps)  # iterations 1-2 are clean, 3 sees NaN
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


def test_nonfinite_parameters_are_never_saved(tmp_path):
    runner = make_runner(tiny_cartpole(iterations=1))
    with torch.no_grad():
        next(runner.policy.actor.parameters())[0, 0] = float("inf")
    with pytest.raises(TrainingFault, match="non-finite policy parameters"):
        runner.save(tmp_path / "model_1.pt")
    assert not (tmp_path / "model_1.pt").exists()


class NanRewardCartPole:
    """A Gymnasium CartPole whose rewards turn NaN after 200 steps (registered in a child process below)."""

    def __new__(cls, **kwargs):
        import gymnasium as gym

        class Wrapper(gym.Wrapper):
            steps = 0

            def step(self, action):
                obs, rew, term, trunc, info = self.env.step(action)
                Wrapper.steps += 1
                return obs, float("nan") if Wrapper.steps > 200 else rew, term, trunc, info

        return Wrapper(gym.make("CartPole-v1", **kwargs).unwrapped)


def test_train_reports_a_learner_fault_in_one_line(tmp_path):
    code = ("import sys, gymnasium; gymnasium.register('NanCartPole-v0', entry_point='tests.test_faults:NanRewardCartPole',"
            " max_episode_steps=500); import train; sys.exit(train.main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "--task", "NanCartPole-v0", "--num-envs", "4", "--max-iterations",
                           "20", "--run-dir", str(tmp_path), "--quiet", "runner.num_steps_per_env=16",
                           "runner.save_interval=1"], capture_output=True, text=True, timeout=300, cwd=ROOT)
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
    assert "model_5.pt holds non-finite" in err and "model_4.pt fails its checksum" in err and "model_3.pt is corrupt" in err


class _Reader(threading.Thread):
    """Collects a child's stdout lines as they come."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []

    def run(self):
        for line in self.stream:
            self.lines.append(line)

    def iterations(self) -> list[int]:
        return [int(m.group(1)) for line in list(self.lines) if (m := re.match(r"it\s+(\d+)/", line))]


def _train_cmd(run: Path, resume: bool) -> list[str]:
    head = ["--resume", str(run)] if resume else ["--task", "CartPole-v1", "--num-envs", "4", "--run-dir", str(run)]
    return [sys.executable, str(ROOT / "train.py"), *head, "--max-iterations", "100000",
            *([] if resume else ["runner.num_steps_per_env=8", "runner.save_interval=1"])]


def test_sigkill_at_random_moments_loses_at_most_one_save_interval(tmp_path):
    """Kill a training process (saving every iteration, so many kills land in a save) 5 times; every time the
    newest checkpoint verifies, is at most one iteration behind the last one logged, and resume continues."""
    rng = random.Random(0)
    run = tmp_path / "run"
    for round_ in range(5):
        proc = subprocess.Popen(_train_cmd(run, resume=round_ > 0), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        reader = _Reader(proc.stdout)
        reader.start()
        deadline = time.time() + 120
        while len(reader.iterations()) < 2 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert reader.iterations(), proc.stderr.read() if proc.poll() is not None else "no progress"
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        reader.join(timeout=10)
        logged = max(reader.iterations())
        path, data = ckpt.load_newest(run)
        assert logged - 1 <= data["iteration"] <= logged, (round_, logged, path)
    assert not list((run / "checkpoints").glob(".*.tmp"))  # resume removes the temporaries of killed saves
    # The TensorBoard curves of the killed processes are on disk up to the last logged iteration.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps = set()
    for events in run.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        steps |= {e.step for e in acc.Scalars("Loss/value")} if "Loss/value" in acc.Tags()["scalars"] else set()
    assert max(steps) >= data["env_steps"]


def test_sigint_saves_a_final_checkpoint_and_exits_cleanly(tmp_path):
    run = tmp_path / "run"
    proc = subprocess.Popen(_train_cmd(run, resume=False)[:-2] + ["runner.num_steps_per_env=8", "runner.save_interval=1000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    reader = _Reader(proc.stdout)
    reader.start()
    deadline = time.time() + 120
    while len(reader.iterations()) < 3 and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 130
    reader.join(timeout=10)
    assert "stopped by Ctrl-C; resume with --resume" in err and "Traceback" not in err
    saved = [line for line in reader.lines if line.startswith("interrupted: saved ")]
    assert saved
    path, data = ckpt.load_newest(run)
    assert data["iteration"] >= max(reader.iterations())


# -------------------------------------------------------------------------------------------- memory
def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
def test_memory_stays_flat_over_many_iterations(tmp_path):
    cfg = tiny_cartpole(iterations=300)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=50))
    runner = make_runner(cfg, run_dir=tmp_path)
    runner.learn(100)  # warm-up: allocator pools, TensorBoard writer, first checkpoints
    start = _rss_mb()
    runner.learn(200)
    growth = _rss_mb() - start
    assert growth < 15.0, f"RSS grew by {growth:.1f} MiB over 200 iterations"
