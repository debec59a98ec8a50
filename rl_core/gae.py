"""Generalized Advantage Estimation as one pure function over ``[T, N]`` tensors."""

from __future__ import annotations

import torch


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    final_values: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
    invalid: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and returns for a rollout.

    ``rewards, values, terminated, truncated, final_values``: ``[T, N]``; the flags describe the transition
    ``t -> t+1``. ``final_values[t]`` is V(final observation) of an env truncated at ``t`` (ignored elsewhere).
    ``last_values``: ``[N]``, V of the observation after the last step.

    Terminated: no bootstrap. Truncated: bootstrap from ``final_values`` (the state before the reset), never
    from the reset observation. Either flag stops the advantage from flowing across the episode boundary.
    A step that is both terminated and truncated counts as terminated.

    ``invalid`` ``[T, N]`` bool (optional): transitions not learned from (diverged physics, non-finite values);
    no advantage flows from them into the step before, which bootstraps from ``values[t]`` as after a truncation.
    """
    T = rewards.shape[0]
    advantages = torch.empty_like(rewards)
    running = torch.zeros_like(last_values)
    next_values = last_values
    for t in reversed(range(T)):
        bootstrap = torch.where(truncated[t], final_values[t], next_values)
        bootstrap = torch.where(terminated[t], torch.zeros_like(bootstrap), bootstrap)
        delta = rewards[t] + gamma * bootstrap - values[t]
        not_done = ~(terminated[t] | truncated[t])
        running = delta + gamma * lam * not_done.to(rewards.dtype) * running
        advantages[t] = running
        next_values = values[t]
        if invalid is not None:
            running = torch.where(invalid[t], torch.zeros_like(running), running)
    return advantages, advantages + values
