"""The README's documented commands, in short, in a fresh venv with only the base install (``pip install -e .``).

No --system-site-packages: the venv sees only what pyproject.toml's base dependencies bring (pip's cache and the
local wheels make the install take about a minute). Marked slow: run with ``pytest -m slow tests/test_base_install.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(cmd: list[str], timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, **kw)


@pytest.fixture(scope="module")
def base_python(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("base_venv")
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(folder)
    python = folder / "bin" / "python"
    r = _run([str(python), "-m", "pip", "install", "-q", "-e", str(ROOT)], timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return python


def _ok(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr[-3000:]


def test_documented_commands_with_the_base_install_only(base_python, tmp_path):
    py = str(base_python)
    # the dev extra's tools are not there: this really is the base install
    assert _run([py, "-c", "import pytest"]).returncode != 0
    run = tmp_path / "cartpole"
    _ok(_run([py, "train.py", "--task", "CartPole-v1", "--max-iterations", "2", "--run-dir", str(run), "--quiet"],
             cwd=ROOT))
    _ok(_run([py, "train.py", "--resume", str(run), "--max-iterations", "3", "--quiet"], cwd=ROOT))
    _ok(_run([py, "train.py", "--task", "quadruped-flat", "--num-envs", "8", "--max-iterations", "1",
              "--run-dir", str(tmp_path / "quad"), "--quiet", "runner.num_steps_per_env=4"], cwd=ROOT))
    _ok(_run([py, "train.py", "--help", "--task", "quadruped-flat"], cwd=ROOT))
    out = tmp_path / "out"
    r = _run([py, "play.py", "--checkpoint", str(tmp_path / "quad"), "--episodes", "1", "--video-seconds", "0.5",
              "--video", str(out / "walk.mp4"), "--json", str(out / "eval.json"), "--export-onnx", str(out / "p.onnx"),
              "--sim2sim", str(out / "p.onnx")], cwd=ROOT)
    _ok(r)
    assert (out / "walk.mp4").stat().st_size > 1000 and (out / "walk.png").is_file()
    assert "lin_vel_tracking_error" in json.loads((out / "eval.json").read_text())
    _ok(_run([py, "play.py", "--checkpoint", str(run), "--episodes", "2", "--video", str(out / "cp.mp4")], cwd=ROOT))
