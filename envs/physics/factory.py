"""Builds the physics backend a config asks for."""

from __future__ import annotations

import mujoco
import torch

from envs.physics.base import Physics


def resolve_backend(backend: str, device: torch.device) -> str:
    """'auto' is MJX when the env lives on a GPU and native MuJoCo otherwise."""
    if backend == "auto":
        return "mjx" if device.type == "cuda" else "native"
    return backend


def make_physics(model: mujoco.MjModel, num_envs: int, nsubsteps: int, model_fields: tuple[str, ...], backend: str,
                 device: torch.device, threads: int = 0, mjx_impl: str = "jax") -> Physics:
    """``backend``: 'native' (CPU, ``threads`` C threads) or 'mjx' (on ``device``)."""
    if backend == "native":
        from envs.physics.native import NativePhysics

        return NativePhysics(model, num_envs, nsubsteps, model_fields, nthread=threads)
    from envs.physics.mjx import MjxPhysics

    return MjxPhysics(model, num_envs, nsubsteps, model_fields, device=device, impl=mjx_impl)
