"""A warm Python for the tests' child processes: imports torch, numpy and yaml once, then forks a child per request.

Started by ``tests/warm_python.py`` as ``python tests/warm_server.py SOCKET`` (never by hand). A child that a test
starts as ``python train.py ...``, ``python -m tools.X ...`` or ``python -c CODE ...`` spends about 3.5 s of CPU on
imports before its first line of work (torch alone 2.5-2.9 s), and the default suite starts about 90 of them. This
server pays those imports once per pytest worker: each request is one connection on a Unix socket carrying the
command, its environment, its folder, its signal dispositions and the child's stdin / stdout / stderr (passed as file
descriptors); the server forks, the child becomes that command as a fresh interpreter would run it (``sys.argv``,
``sys.path[0]``, ``__main__``, the exit code of ``SystemExit``, an uncaught exception's traceback and exit code 1,
atexit handlers, death by SIGINT after an uncaught ``KeyboardInterrupt``), and the server answers the child's pid,
then its raw wait status and the CPU it used once it has ended. The server exits when its stdin closes (its test
process ended) and kills the children still running then.

Nothing of this project is imported here: a child imports the project's modules itself, from its own folder and
environment. What the child inherits from the server is only what these imports set up, which is why the client
starts one server per value of the environment variables that interpreter start-up and these libraries read
(``warm_python.startup_env``).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import threading
import types
from importlib.machinery import BuiltinImporter

PRELOAD = ("numpy", "yaml", "torch")
"""Modules imported once by the server (children then import the project's modules themselves)."""

STATUS = struct.Struct("!iid")
"""The server's answer when a child ends: its pid, its raw wait status, its CPU seconds (user + system)."""

_HERE = os.path.abspath(__file__)
_SHELL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _recv_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """One request: a 4-byte length, then JSON; the three standard streams come with the first bytes."""
    head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
    while len(head) < 4:
        head += conn.recv(4 - len(head))
    (size,) = struct.unpack("!I", head)
    body = b""
    while len(body) < size:
        part = conn.recv(size - len(body))
        if not part:
            raise EOFError("request cut short")
        body += part
    return json.loads(body), fds


def _std_streams(unbuffered: bool) -> None:
    """``sys.stdin`` / ``stdout`` / ``stderr`` as a new interpreter builds them on descriptors 0, 1 and 2."""
    enc = sys.stdout.encoding if sys.stdout else "utf-8"
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=enc)
    for fd, name, errors in ((1, "stdout", "strict"), (2, "stderr", "backslashreplace")):
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(raw if unbuffered else io.BufferedWriter(raw), encoding=enc, errors=errors,
                                  line_buffering=name == "stderr" or raw.isatty(), write_through=unbuffered)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    sys.__stdin__ = sys.stdin


def _become(request: dict, fds: list[int]) -> None:
    """In the forked child: its streams, folder, environment, signals and session, as ``subprocess`` would."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target, inheritable=True)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 4096)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for sig in _SHELL_SIGNALS:
        ignored = sig in request["ignored_signals"]
        default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        signal.signal(sig, signal.SIG_IGN if ignored else default)
    if request["new_session"]:
        os.setsid()
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    _std_streams(request["unbuffered"])


def _run_command(argv: list[str]) -> None:
    """``python ARGV``: a script, ``-m module`` or ``-c code``, with ``sys.argv`` and ``sys.path[0]`` as Python sets
    them, run as ``__main__``."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=__builtins__, __annotations__={}, __loader__=BuiltinImporter)
    sys.modules["__main__"] = main
    if argv[0] == "-c":
        sys.argv, sys.path[0] = ["-c", *argv[2:]], ""
        exec(compile(argv[1], "<string>", "exec"), main.__dict__)
    elif argv[0] == "-m":
        sys.argv, sys.path[0] = ["-m", *argv[2:]], os.getcwd()
        runpy._run_module_as_main(argv[1], alter_argv=True)  # type: ignore[attr-defined]
    else:
        sys.argv, sys.path[0] = list(argv), os.path.dirname(os.path.realpath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


def _exit_code(exc: SystemExit) -> int:
    """The status a fresh interpreter exits with for an uncaught ``SystemExit``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _own_frames(tb: types.TracebackType | None, script: bool) -> types.TracebackType | None:
    """The traceback without this file's frames (and runpy's for a script), as a fresh interpreter prints it."""
    while tb is not None and (tb.tb_frame.f_code.co_filename == _HERE
                              or (script and "runpy" in tb.tb_frame.f_code.co_filename)):
        tb = tb.tb_next
    return tb


def _child(request: dict, fds: list[int]) -> None:
    """The forked child: become the command, run it, end as the interpreter ends (never returns)."""
    code, interrupted = 1, False
    try:
        _become(request, fds)
        _run_command(request["argv"])
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:  # noqa: BLE001 - a fresh interpreter prints any uncaught exception and exits 1
        tb = _own_frames(exc.__traceback__, request["argv"][0] not in ("-c", "-m"))
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        interrupted = isinstance(exc, KeyboardInterrupt)
    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException:  # noqa: BLE001 - as at interpreter exit, a failing flush does not change the status
        code = code or 120
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _start(conn: socket.socket, running: dict[int, socket.socket]) -> None:
    request, fds = _recv_request(conn)
    pid = os.fork()
    if pid == 0:
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    running[pid] = conn
    conn.sendall(struct.pack("!i", pid))


def _reap(running: dict[int, socket.socket]) -> None:
    while running:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = running.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(STATUS.pack(pid, status, usage.ru_utime + usage.ru_stime))
            except OSError:
                pass
            conn.close()


def serve(path: str) -> None:
    """Import ``PRELOAD``, listen on ``path``, print one line with the CPU the imports took, serve until stdin ends."""
    for name in PRELOAD:
        __import__(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running: dict[int, socket.socket] = {}
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "reap")
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    spent = os.times()
    print(json.dumps({"ready": path, "cpu": spent.user + spent.system}), flush=True)
    while True:
        for key, _ in sel.select():
            if key.data == "accept":
                conn, _addr = listener.accept()
                _start(conn, running)
            elif key.data == "reap":
                os.read(wake_r, 4096)
                _reap(running)
            elif not sys.stdin.buffer.read1(4096):
                for pid in running:
                    os.kill(pid, signal.SIGKILL)
                return


if __name__ == "__main__":
    serve(sys.argv[1])
