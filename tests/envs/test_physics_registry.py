"""One backend registry (``envs/physics/registry.py``): construction, ``auto``, the command lines' choices and the
config's values all come from its table; a new row is a new backend everywhere."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import torch

from contract.errors import UserError
from envs.physics.base import PhysicsReadout, PhysicsRequest
from envs.physics.factory import make_physics, require_backend, resolve_backend
from envs.physics.native import NativePhysics
from envs.physics.registry import BACKEND_CHOICES, BACKENDS, REGISTRY, BackendInfo
from envs.robots.quadruped import QUADRUPED
from envs.scenes.assemble import build
from envs.tasks.locomotion.config import LocomotionEnvConfig

CPU = torch.device("cpu")

ROOT = Path(__file__).resolve().parents[2]
CUDA = torch.device("cuda")  # a device object only: nothing runs on it


def _available(monkeypatch, **installed: bool) -> None:
    for name, ok in installed.items():
        monkeypatch.setitem(REGISTRY, name, dataclasses.replace(REGISTRY[name], available=lambda ok=ok: ok))


def test_auto_picks_by_device_type_and_what_is_installed(monkeypatch):
    assert resolve_backend("auto", torch.device("cpu")) == "native"
    assert resolve_backend("auto", torch.device("mps")) == "native"  # no row for it: the CPU's choice
    _available(monkeypatch, warp=True, mjx=True)
    assert resolve_backend("auto", CUDA) == "warp"
    _available(monkeypatch, warp=False)
    assert resolve_backend("auto", CUDA) == "mjx"
    _available(monkeypatch, mjx=False)
    assert resolve_backend("auto", CUDA) == "mjx"  # none installed: the last candidate says what to install
    assert resolve_backend("warp", torch.device("cpu")) == "warp"  # a name is kept as it is


def test_every_row_is_complete_and_auto_has_a_choice_per_listed_device():
    assert BACKENDS == tuple(REGISTRY) and BACKEND_CHOICES == ("auto", *BACKENDS)
    for name, row in REGISTRY.items():
        assert callable(row.create) and callable(row.available), name
        assert row.description and "\n" not in row.description and row.needs, name
        assert row.runs_on in ("cpu", "device") and row.auto_on, name
    assert REGISTRY["native"].available() and REGISTRY["native"].runs_on == "cpu"


@pytest.mark.parametrize("module", ["tools.experiments.speed_census", "bench.env_throughput"])
def test_the_command_lines_offer_exactly_the_registry(module):
    out = subprocess.run([sys.executable, "-m", module, "--backend", "auto"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    listed = ", ".join(f"'{b}'" for b in BACKENDS)
    assert out.returncode == 2 and f"--backend: invalid choice: 'auto' (choose from {listed})" in out.stderr, out.stderr


def test_the_config_takes_exactly_auto_and_the_registry():
    hint = typing.get_type_hints(LocomotionEnvConfig)["backend"]
    if typing.get_origin(hint) is typing.Literal:  # until the config reads the registry itself
        assert set(typing.get_args(hint)) == set(BACKEND_CHOICES)
    else:
        with pytest.raises(UserError):
            LocomotionEnvConfig(backend="nope")


def test_unknown_or_missing_backends_are_one_line(monkeypatch):
    model = build(QUADRUPED).model
    with pytest.raises(UserError, match=r"^env.backend='nope' is not allowed; expected one of auto, native"):
        make_physics("nope", PhysicsRequest(model=model, num_envs=2, nsubsteps=4, model_fields=(), device=CPU))
    with pytest.raises(UserError, match=r"^--backend=nope is not allowed"):
        require_backend("nope", "--backend")
    _available(monkeypatch, warp=False)
    with pytest.raises(UserError) as e:
        require_backend("warp", "--backend")
    assert str(e.value) == "--backend=warp needs warp-lang and mujoco-warp: pip install -e '.[warp]'"
    require_backend("native", "--backend")


class _Recorder:
    """A backend of the test's own: records the request it was built from."""

    def __init__(self, request: PhysicsRequest) -> None:
        self.request, self.num_envs, self.device = request, request.num_envs, request.device

    def read(self) -> PhysicsReadout:  # pragma: no cover - never stepped
        raise NotImplementedError


def test_a_new_row_is_a_new_backend(monkeypatch):
    """Adding a backend: its file (here a class of the test) and one row; make_physics builds it by name."""
    row = BackendInfo(_Recorder, "a recording stub", "device", ("xpu",), lambda: True, "nothing")
    monkeypatch.setitem(REGISTRY, "recorder", row)
    model = build(QUADRUPED).model
    request = PhysicsRequest(model=model, num_envs=3, nsubsteps=2, model_fields=("geom_friction",), device=CPU,
                             threads=5, njmax=7)
    physics = make_physics("recorder", request)
    assert isinstance(physics, _Recorder)
    assert physics.request == PhysicsRequest(model=model, num_envs=3, nsubsteps=2, model_fields=("geom_friction",),
                                             device=CPU, threads=5, mjx_impl="jax", nconmax=None, njmax=7)
    assert resolve_backend("auto", torch.device("xpu")) == "recorder"
    with pytest.raises(TypeError):  # by keywords only: nine fields, four of them ints
        PhysicsRequest(model, 3, 2, ("geom_friction",), CPU)


def test_the_native_row_builds_native_physics():
    model = build(QUADRUPED).model
    physics = make_physics("native", PhysicsRequest(model=model, num_envs=2, nsubsteps=4, model_fields=("body_mass",),
                                                    device=CPU, threads=1))
    assert isinstance(physics, NativePhysics) and physics.num_envs == 2 and physics.nsubsteps == 4
    physics.step(torch.zeros(2, model.nu))
    assert torch.isfinite(physics.read().qpos).all()


def test_the_registry_imports_neither_torch_nor_mujoco():
    """Configs and command lines check a backend name before any expensive import."""
    code = ("import sys; import envs.physics.registry as r; r.REGISTRY['warp'].available(); "
            "print(sorted(m for m in ('torch', 'mujoco', 'jax', 'warp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
