"""The AMP discriminator: an MLP on a transition (s, s') of the normalized AMP observation, its least-squares GAN
loss with a gradient penalty on reference samples, and the style reward (Peng et al. 2021; the legged_gym ports).

``D`` is trained towards +1 on reference transitions and -1 on the policy's; ``style(d) = max(0, 1 - 0.25 (d -
1)^2)`` is 1 where the policy's transition looks like the reference's and 0 beyond ``d = -1``. The normalizer's
running statistics (one per AMP observation entry, shared by s and s') are updated from both kinds of samples.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import nn

from rl_core.modules.mlp import Linear
from rl_core.modules.normalizer import RunningNormalizer


class Discriminator(nn.Module):
    """``D(s, s')`` -> one logit per transition."""

    def __init__(self, obs_dim: int, hidden: Sequence[int]):
        super().__init__()
        self.normalizer = RunningNormalizer(obs_dim)
        """Running statistics of the AMP observation (checkpointed with the network)."""
        dims = [2 * obs_dim, *hidden]
        layers: list[nn.Module] = []
        for a, b in itertools.pairwise(dims):
            layers += [Linear(a, b), nn.ReLU()]  # not in place: the gradient penalty differentiates twice
        layers.append(Linear(dims[-1], 1))
        self.net = nn.Sequential(*layers)

    def inputs(self, s: torch.Tensor, s_next: torch.Tensor) -> torch.Tensor:
        """The network's input ``[n, 2 D]``: both states normalized."""
        return torch.cat([self.normalizer(s), self.normalizer(s_next)], dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


def style_reward(d: torch.Tensor) -> torch.Tensor:
    """``max(0, 1 - 0.25 (d - 1)^2)``: 1 at the reference's target logit (+1), 0 at the policy's (-1) and below."""
    return torch.clamp(1.0 - 0.25 * torch.square(d - 1.0), min=0.0)


def discriminator_loss(disc: Discriminator, policy: tuple[torch.Tensor, torch.Tensor], weights: torch.Tensor,
                       expert: tuple[torch.Tensor, torch.Tensor], grad_penalty: float
                       ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Least-squares loss ``0.5 (mean (D(e) - 1)^2 + mean_w (D(p) + 1)^2)`` plus ``grad_penalty / 2`` times the mean
    squared norm of ``dD / dx`` at the reference inputs; ``weights`` (0 or 1) leave invalid policy samples out.
    Returns the loss and detached metrics."""
    d_policy = disc(disc.inputs(*policy))
    x = disc.inputs(*expert).detach().requires_grad_(True)
    d_expert = disc(x)
    (grad,) = torch.autograd.grad(d_expert.sum(), x, create_graph=True)
    penalty = grad.square().sum(-1).mean()
    w_sum = weights.sum().clamp(min=1.0)
    policy_loss = ((d_policy + 1.0).square() * weights).sum() / w_sum
    expert_loss = (d_expert - 1.0).square().mean()
    loss = 0.5 * (expert_loss + policy_loss) + 0.5 * grad_penalty * penalty
    with torch.no_grad():
        metrics = {"amp_loss": (0.5 * (expert_loss + policy_loss)).detach(), "amp_grad_penalty": penalty.detach(),
                   "amp_expert_d": d_expert.mean().detach(), "amp_policy_d": (d_policy * weights).sum() / w_sum}
    return loss, metrics
