"""Recurrent memory (LSTM or GRU) in front of an MLP head, with its state as one plain tensor.

The state of one memory is a tensor ``[S, L, N, H]``: ``S`` = 2 for an LSTM (h then c), 1 for a GRU (h); ``L``
layers, ``N`` envs (or sequences), ``H`` = memory size. Keeping it as one tensor lets the runner store it per
step, zero it per env at episode ends (one ``masked_fill_``) and checkpoint it without special cases.
"""

from __future__ import annotations

import torch
from torch import nn


class Memory(nn.Module):
    """``nn.LSTM`` / ``nn.GRU`` (time-major) reading ``in_dim`` features and writing ``size`` features per step."""

    def __init__(self, kind: str, in_dim: int, size: int, layers: int, orthogonal_init: bool = True):
        super().__init__()
        if kind not in ("lstm", "gru"):
            raise ValueError(f"memory kind {kind!r}: expected 'lstm' or 'gru'")
        self.kind, self.size, self.layers = kind, size, layers
        self.num_states = 2 if kind == "lstm" else 1
        """Tensors in the state: 2 (h, c) for an LSTM, 1 (h) for a GRU."""
        self.rnn: nn.LSTM | nn.GRU = (nn.LSTM if kind == "lstm" else nn.GRU)(in_dim, size, num_layers=layers)
        if orthogonal_init:
            for name, p in self.rnn.named_parameters():
                if name.startswith("weight"):
                    nn.init.orthogonal_(p, gain=1.0)
                else:
                    nn.init.zeros_(p)

    def state_shape(self, n: int) -> tuple[int, int, int, int]:
        """Shape of the state of ``n`` envs: ``[S, L, n, H]``."""
        return (self.num_states, self.layers, n, self.size)

    def forward(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [T, N, D]`` (or ``[N, D]`` for one step) from ``state [S, L, N, H]`` -> ``(y [T, N, H] or [N, H],
        next state [S, L, N, H])``. Gradients do not flow into ``state`` beyond what autograd sees (the rollout's
        stored states are constants: truncated backpropagation through time over the given sequence)."""
        one_step = x.dim() == 2
        if one_step:
            x = x.unsqueeze(0)
        if self.kind == "lstm":
            y, (h, c) = self.rnn(x, (state[0].contiguous(), state[1].contiguous()))
            nxt = torch.stack([h, c])
        else:
            y, h = self.rnn(x, state[0].contiguous())
            nxt = h.unsqueeze(0)
        return (y.squeeze(0) if one_step else y), nxt
