"""A stop signal answered within a bound (issue 47, item 10): an iteration still running ``runner.stop_grace_s``
after SIGTERM is abandoned and the last completed iteration's state, kept in memory, is written as the final
checkpoint (atomically, loadable with ``weights_only=True``), with the one stop line and exit status 143. The
child has a time limit; SlowCartPole makes an iteration 8 s long whatever the machine's load."""

from __future__ import annotations

import signal
import time

import torch

from fault_injection.harness import STEP_SLEEP_ENV, start_training, wait_for_exit, wait_for_iterations
from fault_injection.signals import STOP_LINE
from rl_core.stopping import StopRequest

GRACE_S = 1.0
ITERATION_S = 8 * 4 * 0.25
"""8 steps of 4 envs of SlowCartPole sleeping 0.25 s each."""


def test_sigterm_mid_iteration_writes_the_last_completed_iteration_within_the_grace(tmp_path, monkeypatch):
    monkeypatch.setenv(STEP_SLEEP_ENV, "0.25")
    run = tmp_path / "run"
    proc, reader = start_training(run, resume=False, save_interval=1_000_000, task="SlowCartPole-v0",
                                  extra=(f"runner.stop_grace_s={GRACE_S}",))
    wait_for_iterations(proc, reader, 1, timeout=120)
    time.sleep(0.5)  # inside iteration 2
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = wait_for_exit(proc, ITERATION_S - 1.0)  # without the grace the iteration would run to its end first
    seconds = time.monotonic() - sent
    reader.join(timeout=10)
    assert code == 143 and GRACE_S <= seconds < ITERATION_S - 1.0, (code, seconds, reader.stderr)
    lines = [m for line in reader.stderr.splitlines() if (m := STOP_LINE.fullmatch(line.strip()))]
    assert len(lines) == 1 and "Traceback" not in reader.stderr, reader.stderr
    name, iteration, path, command = lines[0].groups()
    assert name == "SIGTERM" and iteration == "1" and path == str(run / "checkpoints" / "model_1.pt")
    assert command == f"python train.py --resume auto --run-dir {run}"
    data = torch.load(path, weights_only=True)
    assert data["iteration"] == 1 and max(reader.iterations()) == 1
    assert not list((run / "checkpoints").glob(".model_*.tmp"))


def test_the_fallback_runs_only_when_the_main_thread_has_not_settled():
    fired: list[int] = []
    late = StopRequest()
    late.arm(0.05, fired.append)
    late.note(int(signal.SIGTERM))
    time.sleep(0.3)
    assert fired == [int(signal.SIGTERM)] and not late.settle()  # the fallback runs; the main thread must wait
    early = StopRequest()
    early.arm(0.2, fired.append)
    early.note(int(signal.SIGUSR1))
    assert early.settle()  # the iteration ended in time: the normal stop path
    time.sleep(0.4)
    assert fired == [int(signal.SIGTERM)]
