"""The physics backends: one row per backend, read by ``factory.py`` (construction, ``auto``), the config check
and every command line that offers ``--backend``.

Adding a backend: a file ``envs/physics/<name>.py`` with a class that satisfies ``base.Physics`` and a
``create(request: PhysicsRequest)`` function, and here a three-line function that imports it plus one row. This
module imports neither torch nor MuJoCo (configs and command lines check a backend name before any expensive
import); a backend's module is imported when a simulation is built, and its heavy library (JAX, Warp) later still.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from envs.physics.base import Physics, PhysicsRequest


def installed(*modules: str) -> bool:
    """Whether every module can be imported (found without importing it; a dotted name imports its parents)."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


@dataclass(frozen=True)
class BackendInfo:
    """One physics backend."""

    create: Callable[[PhysicsRequest], Physics]
    """Builds the simulations of a request."""
    description: str
    """One line: what runs (for ``--help`` texts and the docs)."""
    runs_on: Literal["cpu", "device"]
    """Where its simulations and tensors live: ``cpu`` whatever the env's device, or ``device``: the env's
    device (the CPU or a CUDA GPU)."""
    auto_on: tuple[str, ...]
    """Device types (torch ``device.type``) on which ``env.backend=auto`` may pick it: the first installed row
    in table order wins."""
    available: Callable[[], bool]
    """Whether its libraries are installed (checked without importing them)."""
    needs: str
    """What to install when it is not available (ends a one-line error)."""
    graph_capturable: bool = False
    """Its state lives in fixed device memory that torch reads and writes in place, so on a GPU the task logic
    around its step can be captured and replayed as a CUDA graph (``envs/tasks/graphed_step.py``)."""


def _native(request: PhysicsRequest) -> Physics:
    from envs.physics import native

    return native.create(request)


def _warp(request: PhysicsRequest) -> Physics:
    from envs.physics import warp

    return warp.create(request)


def _mjx(request: PhysicsRequest) -> Physics:
    from envs.physics import mjx

    return mjx.create(request)


REGISTRY: dict[str, BackendInfo] = {
    "native": BackendInfo(_native, "MuJoCo C on a thread pool (mujoco.batch); the CPU default", "cpu", ("cpu",),
                          lambda: True, "mujoco (a base dependency)"),
    "warp": BackendInfo(_warp, "MuJoCo Warp driven from torch, CUDA graphs; the GPU default when installed",
                        "device", ("cuda",), lambda: installed("warp", "mujoco_warp"),
                        "warp-lang and mujoco-warp: pip install -e '.[warp]'", graph_capturable=True),
    "mjx": BackendInfo(_mjx, "MJX (JAX): jit(vmap(substeps)), DLPack to torch", "device", ("cuda",),
                       lambda: installed("jax", "mujoco.mjx"), "JAX and mujoco-mjx: pip install -e '.[mjx]'"),
}
"""Backend name -> its row (the values of ``env.backend`` and ``--backend``)."""

BACKENDS: tuple[str, ...] = tuple(REGISTRY)
"""The backend names (argparse ``choices``)."""

BACKEND_CHOICES: tuple[str, ...] = ("auto", *BACKENDS)
"""The values ``env.backend`` takes: ``auto`` or a backend name."""
