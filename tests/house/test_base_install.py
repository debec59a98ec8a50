"""The README's documented commands, in short, with only the base install (``pip install -e .``).

In the default suite the commands run in this environment in child processes that cannot import any module outside
the base install: a ``sitecustomize`` refuses every top-level module whose distribution is not among the base
dependencies and theirs (pyproject.toml's ``dependencies``, resolved through the installed metadata), so the dev
extra's tools, MJX, Warp, W&B, ALE, viser, ... and whatever only they bring are gone. Under ``slow`` the same commands
run in a fresh venv holding the base install alone (no --system-site-packages; pip's cache and the local wheels make
the install take about a minute).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], timeout: float = 600, extra_env: dict[str, str] | None = None,
         **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    env.pop("PYTHONPATH", None)
    env.update(extra_env or {})
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


def _documented_commands(py: str, tmp_path: Path, env: dict[str, str] | None = None) -> None:
    extra = {"extra_env": env or {}}
    # the dev extra's tools are not there: this really is the base install
    assert _run([py, "-c", "import pytest"], **extra).returncode != 0
    run = tmp_path / "cartpole"
    _ok(_run([py, "train.py", "--task", "CartPole-v1", "--max-iterations", "2", "--run-dir", str(run), "--quiet"],
             cwd=ROOT, **extra))
    _ok(_run([py, "train.py", "--resume", str(run), "--max-iterations", "3", "--quiet"], cwd=ROOT, **extra))
    _ok(_run([py, "train.py", "--task", "quadruped-flat", "--num-envs", "8", "--max-iterations", "1",
              "--run-dir", str(tmp_path / "quad"), "--quiet", "runner.num_steps_per_env=4"], cwd=ROOT, **extra))
    _ok(_run([py, "train.py", "--help", "--task", "quadruped-flat"], cwd=ROOT, **extra))
    out = tmp_path / "out"
    r = _run([py, "play.py", "--checkpoint", str(tmp_path / "quad"), "--episodes", "1", "--video-seconds", "0.5",
              "--video", str(out / "walk.mp4"), "--json", str(out / "eval.json"), "--export-onnx", str(out / "p.onnx"),
              "--sim2sim", str(out / "p.onnx")], cwd=ROOT, **extra)
    _ok(r)
    assert (out / "walk.mp4").stat().st_size > 1000 and (out / "walk.png").is_file()
    assert "lin_vel_tracking_error" in json.loads((out / "eval.json").read_text())
    _ok(_run([py, "play.py", "--checkpoint", str(run), "--episodes", "2", "--video", str(out / "cp.mp4")], cwd=ROOT,
             **extra))


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def base_distributions() -> set[str]:
    """This project's distribution and everything its base dependencies require, recursively (extras named in a
    requirement, such as ``gymnasium[box2d,mujoco]``, included; the project's own extras not)."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo: list[tuple[str, tuple[str, ...]]] = [("legged-mjx", ())]
    while todo:
        name, extras = todo.pop()
        if (_norm(name), extras) in seen:
            continue
        seen.add((_norm(name), extras))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
                todo.append((req.name, tuple(sorted(req.extras))))
    return {name for name, _ in seen}


SUBMODULES = {"mujoco.mjx": "mujoco-mjx"}
"""Modules that another distribution installs inside a base one's package (``mujoco-mjx`` puts ``mujoco/mjx``)."""

BLOCKER = """
import re
import sys
from importlib.machinery import PathFinder
BLOCKED = set({top!r})
BLOCKED_SUB = {sub!r}
ALLOWED = set({allowed!r})
class _BaseInstallOnly:
    # PathFinder but for the blocked modules: for them find_spec says None and import says No module named ...
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED or any(name == m or name.startswith(m + ".") for m in BLOCKED_SUB):
            return None
        return PathFinder.find_spec(name, path, target)
    @classmethod
    def find_distributions(cls, *args, **kwargs):
        return (d for d in PathFinder.find_distributions(*args, **kwargs)
                if re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() in ALLOWED)
    @classmethod
    def invalidate_caches(cls):
        PathFinder.invalidate_caches()
sys.meta_path[:] = [_BaseInstallOnly if f is PathFinder else f for f in sys.meta_path]
"""


def blocker_source() -> str:
    """A ``sitecustomize`` refusing every module that the base install would not have."""
    allowed = base_distributions()
    top = sorted(m for m, dists in metadata.packages_distributions().items()
                 if not any(_norm(d) in allowed for d in dists))
    sub = sorted(m for m, dist in SUBMODULES.items() if dist not in allowed)
    return BLOCKER.format(top=top, sub=sub, allowed=sorted(allowed))


def _site(tmp_path: Path) -> dict[str, str]:
    """PYTHONPATH holding the blocking ``sitecustomize``."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(blocker_source())
    return {"PYTHONPATH": str(site)}


def test_the_blocker_refuses_the_extras_and_keeps_the_base(tmp_path):
    allowed = base_distributions()
    assert {"torch", "mujoco", "gymnasium", "box2d", "onnxruntime", "matplotlib", "numpy"} <= allowed
    assert not {"jax", "mujoco-mjx", "warp-lang", "wandb", "pytest", "viser", "ale-py"} & allowed
    gone = ("jax", "warp", "mujoco_warp", "wandb", "pytest", "viser", "cv2", "mujoco.mjx")
    kept = ("torch", "mujoco", "gymnasium", "onnxruntime", "yaml", "numpy", "json", "envs", "train")
    probe = ("import importlib.util as u, importlib.metadata as md; import mujoco; "
             f"print([u.find_spec(m) is None for m in {gone + kept!r}], md.version('imageio') != '', "
             "[d for d in ('jax', 'wandb', 'pytest') if d in {x.metadata['Name'] for x in md.distributions()}])")
    r = _run([sys.executable, "-c", probe], cwd=ROOT, extra_env=_site(tmp_path))
    _ok(r)
    assert r.stdout.strip() == f"{[True] * len(gone) + [False] * len(kept)} True []"


@pytest.mark.slow
def test_documented_commands_with_only_the_base_install_importable(tmp_path):
    _documented_commands(sys.executable, tmp_path, _site(tmp_path))


@pytest.mark.slow
def test_documented_commands_with_the_base_install_only(base_python, tmp_path):
    _documented_commands(str(base_python), tmp_path)
