"""Torch's CPU threads during the task logic of a CPU physics backend.

The task logic is a few hundred small torch ops on ``[num_envs, <=48]`` tensors. With torch's default thread
pool each op above its grain size wakes the OpenMP workers, which then spin on a core after the op ends, while
MuJoCo's own thread pool needs every core for the next physics step: on the 2-core dev machine the physics
step slowed by about 7% and the task logic gained nothing. One torch thread for the task logic avoids both.
The same holds for the policy's inference and the storage between physics steps: a task on a CPU backend asks
the runner for one torch thread over its whole rollout (``rollout_torch_threads``, ``rl_core.env_api.NativeThreads``);
the PPO update keeps the runner's thread count.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rl_core.threads import torch_threads


@contextmanager
def single_threaded(enabled: bool = True) -> Iterator[None]:
    """Run the block with one torch intra-op thread (restored after); a no-op when ``enabled`` is False."""
    with torch_threads(1 if enabled else 0):
        yield
