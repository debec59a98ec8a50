"""A command whose output is piped into a reader that stops early (``train.py --help --task X | head``) ends
quietly: no traceback on stderr."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["train.py", "play.py"])
def test_help_into_a_closed_pipe_ends_without_a_traceback(script):
    args = ["--help", "--task", "CartPole-v1"] if script == "train.py" else ["--help"]
    proc = subprocess.Popen([sys.executable, script, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the command writes a line
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err, err.decode()[-2000:]
