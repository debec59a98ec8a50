"""The policy MLPs: in-place activations must give the values and gradients of the plain ones."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from rl_core.modules.mlp import _ACTIVATIONS, mlp


@pytest.mark.parametrize("activation", sorted(_ACTIVATIONS))
def test_mlp_matches_out_of_place_reference(activation: str) -> None:
    torch.manual_seed(0)
    net = mlp(7, [16, 8], 3, activation, orthogonal_init=True, out_gain=1.0)
    reference = nn.Sequential(*[_ACTIVATIONS[activation]() if not isinstance(m, nn.Linear) else m for m in net])
    x = torch.randn(64, 7)
    grads = []
    for model in (net, reference):
        model.zero_grad()
        out = model(x)
        out.square().sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    (out_a, grads_a), (out_b, grads_b) = grads
    torch.testing.assert_close(out_a, out_b)
    for ga, gb in zip(grads_a, grads_b, strict=True):
        torch.testing.assert_close(ga, gb, rtol=1e-4, atol=1e-5)  # rounding: some derivatives come from the output


def test_in_place_activation_does_not_touch_the_input() -> None:
    net = mlp(5, [4], 2, "elu", orthogonal_init=False, out_gain=1.0)
    x = -torch.rand(3, 5)  # negative inputs: ELU changes them
    before = x.clone()
    net(x)
    assert torch.equal(x, before)
