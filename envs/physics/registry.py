"""The physics backends: one row per backend, read by ``factory.py`` (construction, ``auto``), the config check
and every command line that offers ``--backend``.

Adding a backend: a file ``envs/physics/<name>.py`` with a class that satisfies ``base.Physics`` and a
``create(request: PhysicsRequest)`` function, and one row below. Importing a backend's module is cheap: each
imports its heavy library (JAX, Warp) only when a simulation is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from envs.physics import mjx, native, warp
from envs.physics.base import Physics, PhysicsRequest


def _always() -> bool:
    return True


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
    """Device types (torch ``device.type``) on which ``env.backend=auto`` may pick it: the first available row
    in table order wins."""
    available: Callable[[], bool]
    """Whether its libraries are installed (checked without importing them)."""
    needs: str
    """What to install when it is not available (ends a one-line error)."""


REGISTRY: dict[str, BackendInfo] = {
    "native": BackendInfo(native.create, "MuJoCo C on a thread pool (mujoco.batch); the CPU default", "cpu",
                          ("cpu",), _always, "mujoco (a base dependency)"),
    "warp": BackendInfo(warp.create, "MuJoCo Warp driven from torch, CUDA graphs; the GPU default when installed",
                        "device", ("cuda",), warp.warp_available,
                        "warp-lang and mujoco-warp: pip install -e '.[warp]'"),
    "mjx": BackendInfo(mjx.create, "MJX (JAX), jit(vmap(substeps)), DLPack to torch", "device", ("cuda",),
                       mjx.mjx_available, "JAX and mujoco-mjx: pip install -e '.[mjx]'"),
}
"""Backend name -> its row (the value of ``env.backend`` and ``--backend``)."""

BACKENDS: tuple[str, ...] = tuple(REGISTRY)
"""The backend names (argparse ``choices``)."""

BACKEND_CHOICES: tuple[str, ...] = ("auto", *BACKENDS)
"""The values ``env.backend`` takes: ``auto`` or a backend name."""
