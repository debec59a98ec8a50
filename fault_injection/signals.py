"""Runs stopped the way machines stop them: SIGTERM, SIGINT (also ignored at start, as under nohup), SIGUSR1,
signals during a checkpoint save, three signals in a row, and torchrun stopped by SIGTERM.

``tests/apps/test_signals.py`` runs these once each; ``tools/experiments/fault_campaign.py --only signals`` many times.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

from fault_injection.harness import (
    ROOT,
    ChildOutput,
    start_training,
    wait_for_exit,
    wait_for_iterations,
    wait_for_save,
    with_sigint,
)

STOP_LINE = re.compile(r"stopped by (SIG\w+) at iteration (\d+); checkpoint (.+?); resume with: (.+)")
"""The one line train.py prints when a signal stopped it."""


def _stop_lines(text: str) -> list[re.Match]:
    return [m for line in text.splitlines() if (m := STOP_LINE.fullmatch(line.strip()))]


def signal_round(run: Path, sig: signal.Signals, nohup: bool = False, save_interval: int = 1_000_000,
                 during_save: bool = False, times: int = 1, gap: float = 0.05, delay: float = 0.0,
                 rng: random.Random | None = None, extra: tuple[str, ...] = (), timeout: float = 60.0,
                 after: int = 3, task: str = "CartPole-v1") -> dict[str, Any]:
    """Start CartPole training, send ``sig`` ``times`` times (``gap`` s apart) ``delay`` s after the line of
    iteration ``after`` (plus a random moment within 0.2 s with ``rng``; with ``during_save``, as soon as a save's
    temporary file appears instead) and wait for the exit (at most ``timeout`` s). Returns the exit status, the stop
    lines, the last iteration logged and what the newest verifying checkpoint holds."""
    from rl_core import checkpoint as ckpt

    proc, reader = start_training(run, resume=False, save_interval=save_interval, nohup=nohup, extra=extra, task=task)
    wait_for_iterations(proc, reader, after)
    mid_save = False
    if during_save:
        mid_save = wait_for_save(run / "checkpoints")
    else:
        time.sleep(delay + (rng.uniform(0.0, 0.2) if rng is not None else 0.0))
    for i in range(times):
        if i:
            time.sleep(gap)
        proc.send_signal(sig)
    code = wait_for_exit(proc, timeout)
    reader.join(timeout=10)
    lines = _stop_lines(reader.stderr)
    path, data = ckpt.load_newest(run)
    files = sorted((run / "checkpoints").glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    return {"code": code, "stderr": reader.stderr, "stop_lines": lines, "logged": max(reader.iterations()),
            "checkpoint": data["iteration"], "checkpoint_path": path, "newest_file": files[-1], "mid_save": mid_save,
            "leftovers": len(list((run / "checkpoints").glob(".model_*.tmp")))}


def clean_stop(r: dict[str, Any], sig: signal.Signals, run: Path) -> bool:
    """The outcome the issue asks for: exit 128 + signal, exactly one stop line naming the signal, the newest
    checkpoint (of the last iteration logged) and the resume command, no traceback."""
    if (r["code"] != 128 + sig or len(r["stop_lines"]) != 1 or "Traceback" in r["stderr"]
            or r["checkpoint_path"] != r["newest_file"]):
        return False
    name, iteration, path, command = r["stop_lines"][0].groups()
    return (name == sig.name and int(iteration) == r["checkpoint"] == r["logged"] and Path(path) == r["checkpoint_path"]
            and command == f"python train.py --resume auto --run-dir {run}")


def signals_during_save_round(run: Path, rng: random.Random, sig: signal.Signals = signal.SIGTERM) -> dict[str, Any]:
    """In this process: CartPole training saving every iteration, with train.py's handlers installed; during the
    save of iteration 3 two signals arrive at random Python lines of it (the first stops the run, the second must
    wait for the save). Returns where they landed and what the newest checkpoint holds."""
    import dataclasses

    from fault_injection.cartpole import make_runner, tiny_cartpole
    from rl_core import checkpoint as ckpt
    from rl_core.stopping import stop_on_signals

    cfg = tiny_cartpole(iterations=20)
    runner = make_runner(dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=1)), run)
    real_save = ckpt.save_atomic

    def count_lines(obj: Any, path: Any, at: tuple[int, ...] = ()) -> tuple[Path, int]:
        n = [0]

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                n[0] += 1
                if n[0] in at:
                    os.kill(os.getpid(), sig)
            return tracer

        sys.settrace(tracer)
        try:
            out = real_save(obj, path)
        finally:
            sys.settrace(None)
        return out, n[0]

    moments: list[int] = []

    def save(obj: Any, path: Any) -> Path:
        if obj["iteration"] == 2:  # a save like the next one: how many Python lines it runs
            out, total = count_lines(obj, path)
            first = rng.randrange(1, total)
            moments.extend([total, first, rng.randrange(first + 1, total + 1)])
            return out
        if obj["iteration"] == 3:
            return count_lines(obj, path, at=tuple(moments[1:]))[0]
        return real_save(obj, path)

    with stop_on_signals() as stop, mock.patch.object(ckpt, "save_atomic", save):
        runner.learn(stop=stop)
    path, data = ckpt.load_newest(run)
    return {"stopped_by": runner.stopped_by, "iteration": runner.iteration, "checkpoint": data["iteration"],
            "signals": stop.count, "lines": moments[0], "moments": moments[1:],
            "leftovers": len(list((run / "checkpoints").glob(".model_*.tmp")))}


TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]


def torchrun_sigterm_round(run: Path, limit: float = 30.0) -> dict[str, Any]:
    """Two gloo ranks of CartPole training under torchrun; SIGTERM to torchrun (as ``docker stop`` sends it to
    PID 1) after 3 iterations. Returns how long everything took to exit, rank 0's stop line and checkpoint."""
    from rl_core import checkpoint as ckpt

    cmd = TORCHRUN + ["train.py", "--task", "CartPole-v1", "--num-envs", "4", "--run-dir", str(run),
                      "--max-iterations", "100000", "runner.num_steps_per_env=8", "runner.save_interval=1000000"]
    proc = subprocess.Popen(with_sigint(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"})
    reader = ChildOutput(proc)
    wait_for_iterations(proc, reader, 3, timeout=180)
    t0 = time.time()
    proc.send_signal(signal.SIGTERM)
    code = wait_for_exit(proc, limit)
    seconds = time.time() - t0
    reader.join(timeout=10)
    lines = _stop_lines(reader.stderr)
    path, data = ckpt.load_newest(run)
    return {"code": code, "seconds": seconds, "stderr": reader.stderr, "stop_lines": lines,
            "logged": max(reader.iterations()), "checkpoint": data["iteration"], "checkpoint_path": path}
