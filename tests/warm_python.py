"""``subprocess.Popen`` / ``run`` for the tests' Python children, forked from a warm interpreter (tests/warm_server.py).

``warm_python.run([sys.executable, "train.py", ...], capture_output=True, text=True, timeout=...)`` behaves as
``subprocess.run`` does: the child is its own process (its pid, exit code, signals, pipes, folder and environment
are real), only its interpreter start-up and the import of torch, numpy and yaml are done once per server instead of
once per child (about 3.5 s of CPU each: docs/testing.md). A command it cannot start that way goes through
``subprocess`` unchanged: another executable, interpreter options other than ``-u``, a ``preexec_fn``,
``pass_fds``, a user / group / umask change, ``shell=True``. A test about what a child imports (the torch-free
runtime) uses ``subprocess``: a warm child has torch loaded.

One server per pytest process and per value of ``startup_env`` (what interpreter start-up and the preloaded
libraries read: ``PYTHON*``, locale, thread counts, ``LD_*``, ``CUDA_*``), started on first use; it ends with the
process. ``spent()`` is the CPU of the warm children that have ended and of the servers' imports, which
``tools/experiments/suite_cpu.py`` adds to a test's child CPU (a warm child is not this process's child, so
``os.times`` does not see it).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from tests.warm_server import STATUS

ROOT = Path(__file__).resolve().parent.parent
SERVER = Path(__file__).resolve().parent / "warm_server.py"
STARTUP = re.compile(r"^(PYTHON|LC_|LANG$|LANGUAGE$|OMP_|MKL_|OPENBLAS_|KMP_|GOMP_|LD_|CUDA_|TORCH|PYTORCH)")
"""Environment variables read at interpreter start-up or by the preloaded libraries' import: a child whose values
differ from a server's gets its own server."""

_SHELL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_lock = threading.Lock()
_servers: dict[tuple, _Server] = {}
_spent = [0.0]


def spent() -> float:
    """CPU seconds of the warm children that have ended and of the servers' start-up, in this process."""
    return _spent[0]


def startup_env(env: dict[str, str]) -> tuple:
    """The part of ``env`` a server is chosen by."""
    return tuple(sorted((k, v) for k, v in env.items() if STARTUP.match(k)))


class _Server:
    """One warm interpreter: a child of this process that imports once and forks per request."""

    def __init__(self, env: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="warm-python-")
        self.path = os.path.join(self.folder, "socket")
        self.proc = subprocess.Popen([sys.executable, str(SERVER), self.path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, cwd=ROOT, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            raise RuntimeError(f"tests/warm_server.py did not start (exit {self.proc.wait(timeout=60)})")
        _spent[0] += json.loads(line)["cpu"]

    def start(self, request: dict, fds: list[int]) -> tuple[socket.socket, int]:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.path)
        body = json.dumps(request).encode()
        socket.send_fds(conn, [struct.pack("!I", len(body))], fds)
        conn.sendall(body)
        head = b""
        while len(head) < 4:
            part = conn.recv(4 - len(head))
            if not part:
                raise RuntimeError("tests/warm_server.py closed the connection before starting the child")
            head += part
        return conn, struct.unpack("!i", head)[0]


    def close(self) -> None:
        """Close the server's stdin (it kills the children still running and exits) and remove its socket."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


@atexit.register
def _close_all() -> None:
    for server in _servers.values():
        server.close()


def _server(env: dict[str, str]) -> _Server:
    key = startup_env(env)
    with _lock:
        if key not in _servers or _servers[key].proc.poll() is not None:
            _servers[key] = _Server(env)
        return _servers[key]


def _command(args: Any, kwargs: dict[str, Any]) -> list[str] | None:
    """``args`` after the interpreter when ``Popen(args, **kwargs)`` can start warm, else None."""
    if isinstance(args, (str, bytes, os.PathLike)) or kwargs.get("shell") or kwargs.get("executable"):
        return None
    if any(kwargs.get(k) for k in ("preexec_fn", "pass_fds", "user", "group", "extra_groups")):
        return None
    if kwargs.get("umask", -1) != -1 or kwargs.get("process_group") is not None:
        return None
    argv = [os.fspath(a) for a in args]
    if not argv or argv[0] != sys.executable:
        return None
    rest = argv[1:]
    while rest and rest[0] == "-u":
        rest = rest[1:]
    if not rest or (rest[0].startswith("-") and rest[0] not in ("-c", "-m")) or (rest[0] in ("-c", "-m")
                                                                              and len(rest) < 2):
        return None
    return rest


class Popen(subprocess.Popen):
    """``subprocess.Popen`` whose eligible Python children are forked by a warm server (module docstring)."""

    def __init__(self, args: Any, **kwargs: Any) -> None:
        self._warm_argv = _command(args, kwargs)
        self._warm_unbuffered = isinstance(args, list) and "-u" in [os.fspath(a) for a in args[1:2]]
        self._warm_conn: socket.socket | None = None
        super().__init__(args, **kwargs)

    def _execute_child(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env,  # type: ignore[override]
                       startupinfo, creationflags, shell, p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite,
                       restore_signals, gid, gids, uid, umask, start_new_session, process_group) -> None:
        if self._warm_argv is None:
            return super()._execute_child(  # type: ignore[misc]
                args, executable, preexec_fn, close_fds, pass_fds, cwd, env, startupinfo, creationflags, shell,
                p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite, restore_signals, gid, gids, uid, umask,
                start_new_session, process_group)
        child_env = {os.fsdecode(k): os.fsdecode(v) for k, v in (os.environ if env is None else env).items()}
        unbuffered = self._warm_unbuffered or bool(child_env.get("PYTHONUNBUFFERED"))
        request = {"argv": self._warm_argv, "env": child_env, "cwd": os.path.abspath(os.fspath(cwd or os.curdir)),
                   "new_session": bool(start_new_session), "unbuffered": unbuffered,
                   "ignored_signals": [int(s) for s in _SHELL_SIGNALS if signal.getsignal(s) == signal.SIG_IGN]}
        sys.audit("subprocess.Popen", sys.executable, args, cwd, env)
        fds = [p2cread if p2cread != -1 else 0, c2pwrite if c2pwrite != -1 else 1,
               errwrite if errwrite != -1 else 2]
        try:
            self._warm_conn, self.pid = _server(child_env).start(request, fds)
            self._child_created = True
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)  # type: ignore[attr-defined]

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        if self._warm_conn is None:
            return super()._try_wait(wait_flags)  # type: ignore[misc]
        self._warm_conn.setblocking(wait_flags != os.WNOHANG)
        data = b""
        try:
            while len(data) < STATUS.size:
                part = self._warm_conn.recv(STATUS.size - len(data))
                if not part:
                    raise RuntimeError("tests/warm_server.py ended before the child did")
                data += part
                self._warm_conn.setblocking(True)
        except BlockingIOError:
            return 0, 0
        pid, status, cpu = STATUS.unpack(data)
        _spent[0] += cpu
        self._warm_conn.close()
        self._warm_conn = None
        self._warm_done = (pid, status)
        return pid, status

    def _internal_poll(self, _deadstate: Any = None, **_: Any) -> int | None:
        if self._warm_argv is None:
            return super()._internal_poll(_deadstate)  # type: ignore[misc]
        if self.returncode is None and self._waitpid_lock.acquire(False):  # type: ignore[attr-defined]
            try:
                if self.returncode is None and self._warm_conn is not None:
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)  # type: ignore[attr-defined]
            finally:
                self._waitpid_lock.release()  # type: ignore[attr-defined]
        return self.returncode


def run(*popenargs: Any, input: Any = None, capture_output: bool = False, timeout: float | None = None,
        check: bool = False, **kwargs: Any) -> subprocess.CompletedProcess:
    """``subprocess.run`` on this module's ``Popen``."""
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    with Popen(*popenargs, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        except BaseException:
            process.kill()
            raise
        retcode = process.poll()
        if check and retcode:
            raise subprocess.CalledProcessError(retcode, process.args, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(process.args, retcode, stdout, stderr)
