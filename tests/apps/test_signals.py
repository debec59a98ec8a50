"""Runs stopped the way machines stop them (issue 29): SIGTERM, SIGINT (also ignored at start, as under nohup) and
SIGUSR1 each give a final checkpoint, one line and exit status 128 + signal; signals during a save; three signals;
``--resume auto``; torchrun stopped by SIGTERM. Every child has a time limit and starts with SIGINT at its default
disposition (except the one that models nohup)."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import train
from fault_injection.harness import (
    ROOT,
    STEP_SLEEP_ENV,
    ChildOutput,
    one_line_error,
    run_cli,
    wait_for_exit,
    wait_for_iterations,
    with_sigint,
)
from fault_injection.signals import (
    STOP_LINE,
    clean_stop,
    signal_round,
    signals_during_save_round,
    torchrun_sigterm_round,
)
from rl_core import checkpoint as ckpt

CARTPOLE = ["--task", "CartPole-v1", "--num-envs", "4", "--quiet", "runner.num_steps_per_env=8"]
VOLATILE = ("wall_time_s", "checksum")
"""Checkpoint entries that differ between two runs of the same computation."""


def _same_checkpoint(a: Path, b: Path, skip: tuple[str, ...] = VOLATILE) -> None:
    x, y = torch.load(a, weights_only=True), torch.load(b, weights_only=True)
    assert x.keys() == y.keys()
    for key in x:
        if key not in skip:
            assert _equal(x[key], y[key]), key


def _equal(a, b) -> bool:
    if torch.is_tensor(a):
        return torch.is_tensor(b) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _train(*argv: str) -> int:
    return train.main(list(argv))


# ------------------------------------------------------------------------------------- one signal each
@pytest.mark.slow
def test_sigint_ignored_at_start_as_under_nohup_still_stops_cleanly(tmp_path):
    """The child starts with SIGINT ignored (a background job, nohup): it must still save, print the line and exit
    with 130. (SIGTERM: test_sigterm_then_resume_auto_continues_bit_identically; SIGUSR1: below; SIGINT at its
    default disposition: tests/apps/test_faults.py::test_sigint_saves_a_final_checkpoint_and_exits_cleanly.)"""
    probe = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"]
    for disposition, ignored in (("ignored", "True"), ("default", "False")):  # what the children start with
        out = subprocess.run(with_sigint(probe, disposition), capture_output=True, text=True, timeout=60).stdout
        assert out.strip() == ignored, (disposition, out)
    run = tmp_path / "run"
    r = signal_round(run, signal.SIGINT, nohup=True)
    assert clean_stop(r, signal.SIGINT, run) and r["leftovers"] == 0, r


def test_sigterm_then_resume_auto_continues_bit_identically(tmp_path):
    """The checkpoint a SIGTERM leaves equals the one an uninterrupted run writes at that iteration (everything but
    the wall time and the config's iteration budget), and ``--resume auto`` continues both identically."""
    fixed = ("algorithm.schedule=fixed",)  # the learning rate does not depend on the iteration budget
    stopped = tmp_path / "stopped"
    r = signal_round(stopped, signal.SIGTERM, extra=fixed)
    assert clean_stop(r, signal.SIGTERM, stopped), r
    k = r["checkpoint"]
    straight = tmp_path / "straight"
    assert _train(*CARTPOLE, "--run-dir", str(straight), "--max-iterations", str(k), "runner.save_interval=1000000",
                  *fixed) == 0
    _same_checkpoint(stopped / "checkpoints" / f"model_{k}.pt", straight / "checkpoints" / f"model_{k}.pt",
                     VOLATILE + ("config",))
    for run in (stopped, straight):
        assert _train("--resume", "auto", "--run-dir", str(run), "--quiet", "--max-iterations", str(k + 2)) == 0
    _same_checkpoint(stopped / "checkpoints" / f"model_{k + 2}.pt", straight / "checkpoints" / f"model_{k + 2}.pt")


# ---------------------------------------------------------------------------------- during a save
def test_two_signals_at_random_moments_of_a_save_leave_a_loadable_checkpoint(tmp_path):
    """10 saves, each hit by two SIGTERMs at random Python lines of it: the save finishes, the run stops after it."""
    rng = random.Random(0)
    for i in range(10):
        r = signals_during_save_round(tmp_path / f"run{i}", rng)
        assert r["stopped_by"] == signal.SIGTERM and r["iteration"] == r["checkpoint"] == 3, r
        assert r["leftovers"] == 0 and all(1 <= m <= r["lines"] for m in r["moments"]), r


def test_sigusr1_as_a_save_begins_waits_for_the_save(tmp_path):
    """SIGUSR1 (SLURM's warning ahead of a time limit) as soon as a save's temporary file appears: the save
    completes, the run stops after it with the one line and exit status 138."""
    run = tmp_path / "run"
    r = signal_round(run, signal.SIGUSR1, save_interval=1, during_save=True)
    assert clean_stop(r, signal.SIGUSR1, run) and r["leftovers"] == 0, r


@pytest.mark.slow
def test_a_third_signal_exits_at_once_and_leaves_the_checkpoints_intact(tmp_path, monkeypatch):
    """Three SIGTERMs 0.05 s apart, 0.1 s into an iteration of 8 steps x 4 envs x 20 ms (SlowCartPole: the length
    does not depend on the machine's load): exit at once with 143, no stop line, the newest checkpoint verifies."""
    monkeypatch.setenv(STEP_SLEEP_ENV, "0.02")
    run = tmp_path / "run"
    r = signal_round(run, signal.SIGTERM, save_interval=1, times=3, delay=0.1, after=1, task="SlowCartPole-v0")
    assert r["code"] == 143 and not r["stop_lines"] and "SIGTERM again: exiting at once" in r["stderr"], r
    assert r["checkpoint_path"] == r["newest_file"]  # load_newest verified the newest file: nothing was torn


# ------------------------------------------------------------------------------------- --resume auto
def test_resume_auto_on_an_empty_folder_starts_fresh(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _train(*CARTPOLE, "--run-dir", str(empty), "--resume", "auto", "--max-iterations", "2") == 0
    assert _train(*CARTPOLE, "--run-dir", str(tmp_path / "plain"), "--max-iterations", "2") == 0
    _same_checkpoint(empty / "checkpoints" / "model_2.pt", tmp_path / "plain" / "checkpoints" / "model_2.pt")
    result = run_cli("train", ["--resume", "auto"], tmp_path)
    assert one_line_error(result, "--resume auto needs --run-dir DIR"), result


def test_resume_auto_skips_a_torn_newest_checkpoint(tmp_path, capsys):
    run = tmp_path / "run"
    assert _train(*CARTPOLE, "--run-dir", str(run), "--max-iterations", "3", "runner.save_interval=1") == 0
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    (copy / "checkpoints" / "model_3.pt").unlink()
    torn = run / "checkpoints" / "model_3.pt"
    torn.write_bytes(torn.read_bytes()[:1000])
    capsys.readouterr()
    assert _train("--resume", "auto", "--run-dir", str(run), "--quiet", "--max-iterations", "5") == 0
    out, err = capsys.readouterr()
    assert f"resumed from {run / 'checkpoints' / 'model_2.pt'} at iteration 2" in out
    assert "warning: skipping checkpoint error: " in err and "model_3.pt is corrupt" in err
    assert _train("--resume", str(copy / "checkpoints" / "model_2.pt"), "--quiet", "--max-iterations", "5") == 0
    _same_checkpoint(run / "checkpoints" / "model_5.pt", copy / "checkpoints" / "model_5.pt")
    assert ckpt.load(run / "checkpoints" / "model_3.pt")["iteration"] == 3  # the torn file was replaced by a good one


# ------------------------------------------------------------------------------------------ torchrun
@pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                    reason="needs torch.distributed with gloo")
@pytest.mark.slow
def test_torchrun_stopped_by_sigterm_exits_within_30_s_with_rank_0s_checkpoint(tmp_path):
    run = tmp_path / "run"
    r = torchrun_sigterm_round(run, limit=30.0)
    assert r["seconds"] < 30.0, r
    assert len(r["stop_lines"]) == 1, r["stderr"][-3000:]  # rank 0 alone prints
    name, iteration, path, command = r["stop_lines"][0].groups()
    assert name == "SIGTERM" and int(iteration) == r["checkpoint"] >= r["logged"] and Path(path) == r["checkpoint_path"]
    assert command == f"torchrun --nproc_per_node=2 train.py --resume auto --run-dir {run}"


@pytest.mark.slow
def test_quadruped_stopped_by_sigterm_and_resumed_equals_the_straight_run(tmp_path):
    """A batched simulator saves its envs in the checkpoint: quadruped-flat (native MuJoCo) stopped by SIGTERM and
    continued with ``--resume auto`` ends bit-identical to the same command run straight through."""
    quadruped = ("--task", "quadruped-flat", "--num-envs", "16", "--max-iterations", "40", "env.backend=native",
                 "runner.num_steps_per_env=8", "runner.save_interval=1000", "algorithm.num_learning_epochs=2",
                 "algorithm.num_mini_batches=2")
    stopped, straight = tmp_path / "stopped", tmp_path / "straight"
    proc = subprocess.Popen(with_sigint([sys.executable, "train.py", *quadruped, "--run-dir", str(stopped)]), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reader = ChildOutput(proc)
    wait_for_iterations(proc, reader, 2, timeout=180)
    proc.send_signal(signal.SIGTERM)
    assert wait_for_exit(proc, 120) == 143
    reader.join(timeout=10)
    lines = [m for line in reader.err_lines if (m := STOP_LINE.fullmatch(line.strip()))]
    assert len(lines) == 1, reader.stderr
    k = int(lines[0].group(2))
    assert 2 <= k < 40, reader.stderr
    for argv in (["--resume", "auto", "--run-dir", str(stopped), "--quiet"],
                 [*quadruped, "--run-dir", str(straight), "--quiet"]):
        done = subprocess.run([sys.executable, "train.py", *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
    _same_checkpoint(stopped / "checkpoints" / "model_40.pt", straight / "checkpoints" / "model_40.pt")
