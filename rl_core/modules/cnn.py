"""The Nature-DQN convolutional encoder for stacked uint8 frames (Mnih et al. 2015; CleanRL's PPO on Atari)."""

from __future__ import annotations

import math

import torch
from torch import nn


def conv_output_size(size: int, kernel: int, stride: int) -> int:
    return (size - kernel) // stride + 1


class NatureCNN(nn.Module):
    """``[B, C, H, W]`` uint8 pixels -> ``[B, feature_dim]`` features.

    Pixels are scaled by 1/255 on the fly, so the rollout storage keeps them as uint8 (4x less memory than
    float32). conv 32x8x8/4 -> conv 64x4x4/2 -> conv 64x3x3/1 -> linear ``feature_dim``, ReLU after each.
    The convolutions run in channels-last layout, which is faster on CPUs and on tensor-core GPUs.
    """

    def __init__(self, shape: tuple[int, ...], feature_dim: int = 512, orthogonal_init: bool = True):
        super().__init__()
        channels, height, width = shape
        self.shape, self.feature_dim = tuple(shape), feature_dim
        self.convs = nn.Sequential(
            nn.Conv2d(channels, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
        )
        h, w = height, width
        for kernel, stride in ((8, 4), (4, 2), (3, 1)):
            h, w = conv_output_size(h, kernel, stride), conv_output_size(w, kernel, stride)
        if h < 1 or w < 1:
            raise ValueError(f"images of {height}x{width} are too small for the Nature CNN (at least 36x36)")
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(64 * h * w, feature_dim), nn.ReLU())
        if orthogonal_init:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    nn.init.orthogonal_(m.weight, gain=math.sqrt(2.0))
                    if m.bias is not None:
                        nn.init.zeros_(m.bias)
        self.convs.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # torch stubs lack it

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        x = pixels.to(torch.float32).contiguous(memory_format=torch.channels_last) * (1.0 / 255.0)
        return self.fc(self.convs(x))
