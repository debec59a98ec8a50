"""An observation history: the policy reads its last ``frames`` observations, oldest first.

A frame is the policy's observation of one step (its terms of the table, noisy, as without a history). The
``frames - 1`` frames before the current one are task state (``[N, (frames - 1) * width]``, zeros after a reset:
zeros stand for the frames before an episode's first), so checkpoints, resets and the CUDA graph carry them like
any state. An exported policy carries them as its recurrent state (``rl_core/export.py``: memory ``history``), so
sim2sim and the robot-side runtime feed one frame per step and zeros at an episode's start, as here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from envs.tasks.obs_table import ObsTerm


def frame_width(table: Sequence[ObsTerm], sizes: Mapping[str, int], exclude: Sequence[str]) -> int:
    """Width of one frame: the policy's terms of ``table`` (sizes resolved by ``sizes``; ``exclude``d left out)."""
    return sum(t.size if isinstance(t.size, int) else sizes[t.size] for t in table if t.name not in exclude)


class History:
    """The stacked observation of ``frames`` frames of ``width`` values each."""

    def __init__(self, frames: int, width: int):
        self.frames, self.width = frames, width

    @property
    def past_width(self) -> int:
        """Width of the state that holds the past frames."""
        return (self.frames - 1) * self.width

    def stack(self, past: torch.Tensor, frame: torch.Tensor) -> torch.Tensor:
        """``[N, frames * width]``: the past frames ``[N, past_width]`` (oldest first), then this one."""
        return frame if self.frames == 1 else torch.cat([past, frame], dim=1)

    def past_of(self, stacked: torch.Tensor) -> torch.Tensor:
        """The past frames of the next step: the stacked observation without its oldest frame."""
        return stacked[:, self.width:]
