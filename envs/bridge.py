"""Zero-copy hand-over between JAX arrays and torch tensors (DLPack); used by the MJX backend only."""

from __future__ import annotations

from typing import Any

import torch


def to_torch(x: Any) -> torch.Tensor:
    """A torch view of a JAX array on the same device (no copy)."""
    return torch.from_dlpack(x)


def to_jax(t: torch.Tensor) -> Any:
    """A JAX view of a torch tensor on the same device (no copy when it is contiguous)."""
    import jax.numpy as jnp

    return jnp.from_dlpack(t.contiguous())
