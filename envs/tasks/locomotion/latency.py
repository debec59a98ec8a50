"""Action latency: each env applies the action its policy chose ``action_delay`` control steps before.

The delay of an env is drawn at each of its resets (``randomization.py``, ``env.randomization.action_delay``);
the queue of the policy's last actions is task state (``LocomotionState.action_queue``, zeros after a reset: the
default pose). The queue is updated in place: the step's first half (``_act``) runs outside the CUDA graph, whose
static buffers must stay the state's tensors.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from envs.tasks.locomotion.state import LocomotionState

WRITES = ("action_queue",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


def delayed(state: LocomotionState, actions: torch.Tensor) -> torch.Tensor:
    """The actions to apply this step ``[N, J]``: ``actions`` for an env without delay, else the ones chosen
    ``state.action_delay`` steps ago; ``actions`` join the queue. Without a queue (no latency) ``actions`` as
    they are."""
    queue = state.action_queue  # [N, D, J], newest first
    if queue.shape[1] == 0:
        return actions
    recent = torch.cat([actions.unsqueeze(1), queue], dim=1)  # [N, D + 1, J]: index d = chosen d steps ago
    index = state.action_delay.view(-1, 1, 1).expand(-1, 1, recent.shape[2])
    applied = recent.gather(1, index).squeeze(1)
    queue.copy_(recent[:, :-1])
    return applied


def delay_of(state: LocomotionState) -> Callable[[torch.Tensor], torch.Tensor]:
    """``delayed`` on ``state`` (the ``applied`` part of ``envs/tasks/parts.py``)."""

    def applied(actions: torch.Tensor) -> torch.Tensor:
        return delayed(state, actions)

    return applied
