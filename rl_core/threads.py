"""Torch's intra-op thread count for the length of a block.

Torch's CPU ops above their grain size wake its OpenMP workers, which then spin on a core for a while after the op
ends. Where native threads of the env (a CPU physics backend's pool) need every core between those ops, the
spinning workers slow them down; one torch thread during that stretch avoids it (``NativeThreads`` in
``rl_core/env_api.py``; the measurements in docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` torch intra-op threads, restored after; 0 (or the current count): no change."""
    before = torch.get_num_threads()
    if count <= 0 or count == before:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
