"""Action distributions as pure functions of a parameter tensor.

The actor outputs ``params`` (Gaussian: mean and std side by side; Categorical: logits). The rollout stores
those params, so the update can compute KL(old || new) exactly. No ``torch.distributions`` objects are
built per step (they validate arguments and cost more than the math).
"""

from __future__ import annotations

import math

import torch
from torch import nn

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class GaussianHead(nn.Module):
    """Diagonal Gaussian with a state-independent, learned log-std clamped to [min_std, max_std]."""

    discrete = False

    def __init__(self, num_actions: int, init_std: float, min_std: float, max_std: float):
        super().__init__()
        self.num_actions = num_actions
        self.min_std, self.max_std = float(min_std), float(max_std)
        self.log_std = nn.Parameter(torch.full((num_actions,), math.log(init_std)))

    @property
    def action_dim(self) -> int:
        """Width of an action as stored in the rollout."""
        return self.num_actions

    @property
    def param_dim(self) -> int:
        return 2 * self.num_actions

    def std(self) -> torch.Tensor:
        return self.log_std.exp().clamp(self.min_std, self.max_std)

    def params(self, actor_out: torch.Tensor) -> torch.Tensor:
        return torch.cat([actor_out, self.std().expand_as(actor_out)], dim=-1)

    def split(self, params: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return params[..., : self.num_actions], params[..., self.num_actions :]

    def sample(self, params: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        mean, std = self.split(params)
        noise = torch.randn(mean.shape, generator=generator, device=mean.device, dtype=mean.dtype)
        return mean + std * noise

    def mode(self, params: torch.Tensor) -> torch.Tensor:
        return self.split(params)[0]

    def log_prob(self, params: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        mean, std = self.split(params)
        z = (actions - mean) / std
        return (-0.5 * z.square() - std.log() - _LOG_SQRT_2PI).sum(-1)

    def entropy(self, params: torch.Tensor) -> torch.Tensor:
        std = self.split(params)[1]
        return (0.5 + _LOG_SQRT_2PI + std.log()).sum(-1)

    def kl(self, old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        """KL(old || new) per sample."""
        m0, s0 = self.split(old)
        m1, s1 = self.split(new)
        return (torch.log(s1 / s0) + (s0.square() + (m0 - m1).square()) / (2.0 * s1.square()) - 0.5).sum(-1)

    def mean_std(self) -> torch.Tensor:
        return self.std().mean()


class CategoricalHead(nn.Module):
    """Categorical over ``n`` actions from logits; actions are stored as a float index of width 1."""

    discrete = True

    def __init__(self, num_actions: int):
        super().__init__()
        self.num_actions = num_actions

    @property
    def action_dim(self) -> int:
        return 1

    @property
    def param_dim(self) -> int:
        return self.num_actions

    def params(self, actor_out: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(actor_out, dim=-1)

    def sample(self, params: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        flat = params.reshape(-1, self.num_actions).exp()
        idx = torch.multinomial(flat, 1, generator=generator)
        return idx.reshape(*params.shape[:-1], 1).to(params.dtype)

    def mode(self, params: torch.Tensor) -> torch.Tensor:
        return params.argmax(-1, keepdim=True).to(params.dtype)

    def log_prob(self, params: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return params.gather(-1, actions.long()).squeeze(-1)

    def entropy(self, params: torch.Tensor) -> torch.Tensor:
        return -(params.exp() * params).sum(-1)

    def kl(self, old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        return (old.exp() * (old - new)).sum(-1)

    def mean_std(self) -> torch.Tensor:
        return torch.zeros(())
