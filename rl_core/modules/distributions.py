"""Action distributions as pure functions of a parameter tensor.

The actor outputs ``params`` (Gaussian: mean and std side by side; Categorical: logits). The rollout stores
those params, so the update can compute KL(old || new) exactly. No ``torch.distributions`` objects are
built per step (they validate arguments and cost more than the math).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from contract.errors import ConfigError
from rl_core.config import PolicyConfig
from rl_core.env_api import ActionSpec

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

    def env_action(self, actions: torch.Tensor) -> torch.Tensor:
        """What the env receives for a stored action (the env clips it to its bounds)."""
        return actions

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


class SquashedGaussianHead(GaussianHead):
    """tanh of a diagonal Gaussian, scaled to the action bounds ``[low, high]`` (SAC's squashing, for PPO).

    The rollout stores the pre-squash sample ``u`` (so log-probabilities and the KL stay exact and cheap);
    the env receives ``env_action(u) = low + (tanh(u) + 1) / 2 * (high - low)``. The log-probability of the
    squashed action is the Gaussian one minus the log-determinant of that map,
    ``sum_i log((high_i - low_i) / 2) + log(1 - tanh(u_i)^2)``, the latter computed stably as
    ``2 (log 2 - u - softplus(-2u))``. The KL between two squashed Gaussians equals the KL of the Gaussians (an
    invertible map changes neither). The entropy has no closed form: it is the Gaussian entropy plus the
    expected log-determinant, each dimension's expectation taken by Gauss-Hermite quadrature (deterministic
    and differentiable).
    """

    _NODES, _WEIGHTS = (torch.tensor(x, dtype=torch.float32) for x in np.polynomial.hermite_e.hermegauss(16))
    """Gauss-Hermite nodes and weights for expectations over a standard normal (16 points)."""

    low: torch.Tensor
    high: torch.Tensor

    def __init__(self, num_actions: int, init_std: float, min_std: float, max_std: float,
                 low: tuple[float, ...], high: tuple[float, ...]):
        super().__init__(num_actions, init_std, min_std, max_std)
        self.register_buffer("low", torch.tensor(low, dtype=torch.float32))
        self.register_buffer("high", torch.tensor(high, dtype=torch.float32))

    @staticmethod
    def _log_one_minus_tanh_sq(u: torch.Tensor) -> torch.Tensor:
        return 2.0 * (math.log(2.0) - u - torch.nn.functional.softplus(-2.0 * u))

    def _log_det(self, u: torch.Tensor, nodes_last: bool = False) -> torch.Tensor:
        """log |d env_action / d u| per dimension (``nodes_last``: ``u`` has a trailing quadrature-node axis)."""
        log_scale = torch.log((self.high - self.low) / 2.0)
        return (log_scale.unsqueeze(-1) if nodes_last else log_scale) + self._log_one_minus_tanh_sq(u)

    def env_action(self, actions: torch.Tensor) -> torch.Tensor:
        return self.low + (torch.tanh(actions) + 1.0) * 0.5 * (self.high - self.low)

    def mode(self, params: torch.Tensor) -> torch.Tensor:
        """The squashed mean, in env units."""
        return self.env_action(self.split(params)[0])

    def log_prob(self, params: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return super().log_prob(params, actions) - self._log_det(actions).sum(-1)

    def entropy(self, params: torch.Tensor) -> torch.Tensor:
        mean, std = self.split(params)
        nodes = self._NODES.to(mean.device, mean.dtype)
        weights = (self._WEIGHTS / self._WEIGHTS.sum()).to(mean.device, mean.dtype)
        u = mean.unsqueeze(-1) + std.unsqueeze(-1) * nodes  # [..., n, K]: E over N(mean, std) per dimension
        expected_log_det = (self._log_det(u, nodes_last=True) * weights).sum(-1)
        return super().entropy(params) + expected_log_det.sum(-1)


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

    def env_action(self, actions: torch.Tensor) -> torch.Tensor:
        """The action index the env takes: ``[..., 1]`` float -> ``[...]`` long."""
        return actions.squeeze(-1).long()

    def log_prob(self, params: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return params.gather(-1, actions.long()).squeeze(-1)

    def entropy(self, params: torch.Tensor) -> torch.Tensor:
        return -(params.exp() * params).sum(-1)

    def kl(self, old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        return (old.exp() * (old - new)).sum(-1)

    def mean_std(self) -> torch.Tensor:
        return torch.zeros(())


def make_head(action_spec: ActionSpec, cfg: PolicyConfig) -> GaussianHead | CategoricalHead:
    """The head for ``action_spec`` as ``cfg.distribution`` asks: categorical for discrete actions, a (squashed)
    Gaussian for continuous ones (a squashed one maps to the spec's bounds, ``[-1, 1]`` where it has none)."""
    if action_spec.discrete:
        if cfg.distribution != "gaussian":
            raise ConfigError("policy.distribution", cfg.distribution, "'gaussian' for a task with discrete actions "
                              "(a categorical head is used)")
        return CategoricalHead(action_spec.n)
    n = action_spec.n
    if cfg.distribution == "squashed_gaussian":
        return SquashedGaussianHead(n, cfg.init_noise_std, cfg.min_std, cfg.max_std,
                                    action_spec.low or (-1.0,) * n, action_spec.high or (1.0,) * n)
    return GaussianHead(n, cfg.init_noise_std, cfg.min_std, cfg.max_std)
