"""Builds the physics backend a config asks for."""

from __future__ import annotations

import mujoco
import torch

from envs.physics.base import Physics


def resolve_backend(backend: str, device: torch.device) -> str:
    """'auto' on a GPU is MuJoCo Warp when it is installed, else MJX; on the CPU, native MuJoCo."""
    if backend == "auto":
        if device.type != "cuda":
            return "native"
        from envs.physics.warp import warp_available

        return "warp" if warp_available() else "mjx"
    return backend


def make_physics(model: mujoco.MjModel, num_envs: int, nsubsteps: int, model_fields: tuple[str, ...], backend: str,
                 device: torch.device, threads: int = 0, mjx_impl: str = "jax", nconmax: int | None = None,
                 njmax: int | None = None) -> Physics:
    """``backend``: 'native' (CPU, ``threads`` C threads), 'mjx' or 'warp' (on ``device``; ``nconmax`` /
    ``njmax``: Warp's contact and constraint buffers per world, None for its estimate)."""
    if backend == "native":
        from envs.physics.native import NativePhysics

        return NativePhysics(model, num_envs, nsubsteps, model_fields, nthread=threads)
    if backend == "warp":
        from envs.physics.warp import WarpPhysics

        return WarpPhysics(model, num_envs, nsubsteps, model_fields, device=device, nconmax=nconmax, njmax=njmax)
    from envs.physics.mjx import MjxPhysics

    return MjxPhysics(model, num_envs, nsubsteps, model_fields, device=device, impl=mjx_impl)
