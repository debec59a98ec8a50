"""Builds the physics backend a config asks for, from the table in ``envs/physics/registry.py``."""

from __future__ import annotations

import torch

from contract.errors import UserError
from envs.physics.base import Physics, PhysicsRequest
from envs.physics.registry import BACKEND_CHOICES, BACKENDS, REGISTRY


def resolve_backend(backend: str, device: torch.device) -> str:
    """``auto``: the first backend of the table whose ``auto_on`` has ``device.type`` and that is installed
    (on a GPU: MuJoCo Warp when installed, else MJX; on the CPU: native MuJoCo), or the last such one when none is
    installed (its constructor then says what to install); other names are returned as they are."""
    if backend != "auto":
        return backend
    kind = device.type if any(device.type in b.auto_on for b in REGISTRY.values()) else "cpu"
    candidates = [name for name, b in REGISTRY.items() if kind in b.auto_on]
    return next((name for name in candidates if REGISTRY[name].available()), candidates[-1])


def require_backend(backend: str, flag: str) -> None:
    """A one-line UserError when ``backend`` is not a backend name or its libraries are not installed
    (``flag``: how the user gave it, e.g. ``--backend``)."""
    if backend not in REGISTRY:
        raise UserError(f"{flag}={backend} is not allowed; expected one of {', '.join(BACKENDS)}")
    if not REGISTRY[backend].available():
        raise UserError(f"{flag}={backend} needs {REGISTRY[backend].needs}")


def make_physics(backend: str, request: PhysicsRequest) -> Physics:
    """The simulations of ``request`` on ``backend``: a name of ``envs/physics/registry.py`` (not ``auto``: see
    ``resolve_backend``)."""
    if backend not in REGISTRY:
        raise UserError(f"env.backend={backend!r} is not allowed; expected one of {', '.join(BACKEND_CHOICES)}")
    return REGISTRY[backend].create(request)
