"""tests/warm_python.py: a warm child behaves as ``subprocess`` would start it, checked against ``subprocess``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import warm_python

PY = sys.executable
CASES = {
    "exit code": ["-c", "import sys; print(sys.argv); sys.exit(3)", "a", "b"],
    "exit message": ["-c", "import sys; sys.exit('a message')"],
    "large exit code": ["-c", "import sys; sys.exit(300)"],
    "traceback of -c": ["-c", "import json; json.loads('x')"],
    "-m with arguments": ["-m", "json.tool", "--sort-keys", "missing.json"],
    "keyboard interrupt": ["-c", "raise KeyboardInterrupt"],
    "unbuffered": ["-u", "-c", "import sys; print('out'); print('err', file=sys.stderr); print('out2')"],
    "atexit and threads": ["-c", "import atexit, threading, time; atexit.register(print, 'atexit');"
                                 "threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()"],
    "main module": ["-c", "import __main__, sys; print(sorted(__main__.__dict__), __main__.__loader__, sys.path[0])"],
}


@pytest.mark.parametrize("case", CASES)
def test_a_warm_child_prints_and_exits_as_a_fresh_interpreter(case, tmp_path):
    cmd = [PY, *CASES[case]]
    kw = {"capture_output": True, "text": True, "timeout": 60, "cwd": tmp_path}
    cold, warm = subprocess.run(cmd, **kw), warm_python.run(cmd, **kw)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_a_script_gets_its_folder_argv_environment_and_stdin(tmp_path):
    script = tmp_path / "tool" / "show.py"
    script.parent.mkdir()
    script.write_text("import json, os, sys\nprint(json.dumps([sys.argv, sys.path[0], os.getcwd(), "
                      "os.environ.get('WARM_CHECK'), 'WARM_ONLY_HERE' in os.environ, sys.stdin.read()]))\n")
    cmd = [PY, str(script), "--x", "1"]
    kw = {"capture_output": True, "text": True, "timeout": 60, "cwd": tmp_path, "input": "fed",
          "env": {**os.environ, "WARM_CHECK": "yes"}}
    cold, warm = subprocess.run(cmd, **kw), warm_python.run(cmd, **kw)
    assert warm.returncode == 0 and warm.stdout == cold.stdout, (warm, cold)


def test_a_started_child_streams_takes_signals_and_times_out():
    proc = warm_python.Popen([PY, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "up\n" and proc.poll() is None
    assert os.getpgid(proc.pid) != proc.pid  # a child of the server, in its process group
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == -signal.SIGTERM
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run([PY, "-c", "import time; time.sleep(60)"], timeout=1)
    assert time.monotonic() - start < 10


def test_a_new_session_and_ignored_sigint_are_passed_on():
    probe = [PY, "-c", "import os, signal; print(os.getsid(0) == os.getpid(), "
                       "signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"]
    assert warm_python.run(probe, capture_output=True, text=True, timeout=60,
                           start_new_session=True).stdout == "True False\n"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert warm_python.run(probe, capture_output=True, text=True, timeout=60).stdout == "False True\n"
    finally:
        signal.signal(signal.SIGINT, before)


def test_warm_children_share_a_server_and_count_their_cpu():
    probe = [PY, "-c", "import os, sys; print(os.getppid(), 'torch' in sys.modules)"]
    spent = warm_python.spent()
    first, second = (warm_python.run(probe, capture_output=True, text=True, timeout=60).stdout for _ in range(2))
    assert first == second and first.endswith(" True\n")  # one server, which preloaded torch
    assert int(first.split()[0]) != os.getpid()
    other = warm_python.run(probe, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "OMP_NUM_THREADS": "3"}).stdout
    assert other.split()[0] != first.split()[0]  # another start-up environment, another server
    busy = [PY, "-c", "sum(i * i for i in range(3_000_000))"]
    before = warm_python.spent()
    warm_python.run(busy, check=True, timeout=60)
    assert warm_python.spent() - before > 0.05 and before > spent


@pytest.mark.parametrize("args", [["-I", "-c", "print(1)"], ["-c"]])
def test_what_cannot_start_warm_goes_through_subprocess(args, tmp_path):
    assert warm_python._command([PY, *args], {}) is None
    cold = subprocess.run([PY, *args], capture_output=True, text=True, timeout=60)
    warm = warm_python.run([PY, *args], capture_output=True, text=True, timeout=60)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert warm_python._command(["/bin/echo", "x"], {}) is None
    assert warm_python._command([PY, "-c", "pass"], {"preexec_fn": print}) is None
    assert warm_python._command([PY, str(Path(__file__))], {}) == [str(Path(__file__))]
