"""Stop a run the way machines stop processes: SIGINT, SIGTERM or SIGUSR1 ask for a clean stop.

``docker stop``, Kubernetes, systemd and SLURM send SIGTERM (SLURM also SIGUSR1 ahead of a time limit, with
``--signal=USR1@90``); a terminal sends SIGINT. The handlers are installed whatever disposition the process
inherited: a process started with SIGINT ignored (a background job of a non-interactive shell, some process
managers) reacts too, where Python's KeyboardInterrupt never would.

- 1st signal: a flag. The runner reads it before each iteration (agreed over the ranks under torchrun), so the
  iteration in progress finishes; then a final checkpoint is written (atomically) and train.py prints one line
  and exits with 128 + the signal's number. Within a bound: a single-process run keeps the last completed
  iteration's state in memory, and when the iteration in progress has not ended ``runner.stop_grace_s`` seconds
  after the signal, a timer thread writes that state as the final checkpoint (atomically), prints the same line
  and ends the process (``StopRequest.arm``): the checkpoint is on disk ``stop_grace_s`` plus one write after the
  signal, however long an iteration takes (under torchrun the ranks still finish the iteration together).
- 2nd signal: nothing more happens; the iteration and the save go on (a half-written checkpoint helps nobody).
- 3rd signal: exit at once with 128 + its number. Checkpoints are written to a temporary file and renamed, so
  this leaves the previous checkpoint intact (and at most a temporary file, removed by the next resume).

Signals are counted by a thread that reads Python's wakeup file descriptor (one byte per delivered signal),
not by the Python-level handler: that handler runs only between two bytecodes of the main thread, so it
neither sees a signal while the main thread waits in a long native call nor counts two signals that arrive
before it runs.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)
"""The signals that ask a run to stop cleanly."""

EXIT_AT_ONCE = 3
"""The signal count at which the process exits without waiting for the iteration or the save."""


class StopRequest:
    """What the signal handlers saw: the first stop signal's number (0: none) and how many arrived."""

    def __init__(self) -> None:
        self.signum = 0
        self.count = 0
        self._lock = threading.Lock()
        self._grace_s = 0.0
        self._fallback: Callable[[int], None] | None = None
        self._settled = False

    def arm(self, grace_s: float, fallback: Callable[[int], None]) -> None:
        """After the first stop signal, unless ``settle`` is called within ``grace_s`` seconds, ``fallback(signum)``
        runs on a timer thread (it writes the last completed iteration's checkpoint and ends the process)."""
        with self._lock:
            self._grace_s, self._fallback = grace_s, fallback
            start = self.count != 0
        if start:
            self._start_timer()

    def settle(self) -> bool:
        """The main thread has reached its stop point: the fallback will not run. False when it already runs
        (it ends the process)."""
        with self._lock:
            if self._settled:
                return False
            self._settled = True
            return True

    def _start_timer(self) -> None:
        timer = threading.Timer(self._grace_s, self._expire)
        timer.daemon = True
        timer.start()

    def _expire(self) -> None:
        with self._lock:
            if self._settled or self._fallback is None:
                return
            self._settled = True
            fallback, signum = self._fallback, self.signum
        fallback(signum)

    @property
    def requested(self) -> bool:
        return self.signum != 0

    def note(self, signum: int) -> None:
        """One delivered stop signal: the first sets the flag, the third ends the process at once."""
        with self._lock:
            self.count += 1
            if self.signum == 0:
                self.signum = signum
            count = self.count
            # the first counted signal starts the timer (the Python-level handler may have set signum already)
            armed = count == 1 and self._fallback is not None
        if armed:
            self._start_timer()
        if count >= EXIT_AT_ONCE:
            # os.write, not print: the main thread may be inside a print of its own.
            os.write(2, f"{signal_name(signum)} again: exiting at once; the newest checkpoint on disk is intact\n"
                        .encode())
            os._exit(exit_status(signum))

    def handle(self, signum: int, frame: FrameType | None = None) -> None:
        """The Python-level handler: sets the flag (the watcher thread counts; this is the fallback without one)."""
        if self.signum == 0:
            self.signum = signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_status(signum: int) -> int:
    """The shell's convention for a process ended by a signal: 128 + its number (SIGINT 130, SIGTERM 143)."""
    return 128 + signum


def _watch(read_fd: int, request: StopRequest) -> None:
    """Count the signals written to the wakeup pipe (one byte each) until the pipe is closed."""
    wanted = {int(s) for s in STOP_SIGNALS}
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data:
            return
        for signum in data:
            if signum in wanted:
                request.note(signum)


@contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Install the stop handlers for the duration of the block; the previous handlers come back after it.

    Outside the main thread, where Python cannot install handlers, nothing is installed and the request stays
    empty."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    previous: dict[signal.Signals, Any] = {}
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # required by set_wakeup_fd; the reading end blocks in the watcher thread
    old_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    watcher = threading.Thread(target=_watch, args=(read_fd, request), name="stop-signal-watcher", daemon=True)
    watcher.start()
    try:
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, request.handle)
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        signal.set_wakeup_fd(old_wakeup)
        os.close(write_fd)  # the watcher reads the end of the pipe and returns
        watcher.join(timeout=5)
        os.close(read_fd)
