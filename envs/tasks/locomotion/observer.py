"""The velocity-tracking observation of a step's view: the policy's (noisy, with its history) and a separate
critic's (noise-free, with the privileged terms), with the validity check (a ``parts.Observe``)."""

from __future__ import annotations

import torch

from envs.tasks.history import History
from envs.tasks.locomotion import observations
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.locomotion.step import Step
from envs.tasks.observations import ObservationLayout, finite
from rl_core.env_api import Obs

WRITES = ("past_frames",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


class Observer:
    """The observation of ``layout`` (``sources``: what its terms read besides the step and the state; ``bound``:
    per column of the noise-free observation the largest magnitude a sane world shows; the noise drawn from
    ``generator`` for all ``num_envs`` envs). ``critic``: None (no critic group), ``"exact"`` (the noise-free
    terms) or ``"privileged"`` (those and the privileged terms)."""

    def __init__(self, layout: ObservationLayout[observations.Inputs, LocomotionEnvConfig],
                 sources: observations.Sources, state: LocomotionState, history: History, bound: torch.Tensor,
                 critic: str | None, generator: torch.Generator, num_envs: int):
        self.layout, self.sources, self.state, self.history, self.bound = layout, sources, state, history, bound
        self.critic, self.generator, self.num_envs = critic, generator, num_envs

    def __call__(self, v: Step, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        """The policy observation (noisy; without the ``policy_exclude`` terms) and, with a separate critic, the
        critic's (noise-free); non-finite values replaced by 0. Also, with ``check``, ``[N]`` bool: the world's
        observation was non-finite or beyond its bounds (every bound is finite: NaN and inf fail the ``<=``; the
        noise and the policy's columns are finite where the noise-free values are); None without. ``rows``: ``v``
        holds these envs only (the noise is still drawn for all envs, so the random stream and every observed value
        are those of a full observation)."""
        state = self.state
        exact, obs, bad = self.layout.observe(observations.Inputs(v, state, self.sources, rows), self.bound,
                                              self.generator, self.num_envs, rows, check)
        out = {"policy": self.history.stack(state.past_frames if rows is None else state.past_frames[rows], obs)}
        if self.critic is not None:
            privileged = state.privileged if rows is None else state.privileged[rows]
            critic = torch.cat([exact, privileged], dim=1) if self.critic == "privileged" else exact
            out["critic"] = finite(critic)
            if bad is not None and self.critic == "privileged":  # the critic's other columns
                bad = bad | ~torch.isfinite(privileged).all(dim=1)
        return out, bad

    def keep_history(self, obs: Obs) -> None:
        """The policy observation's newest frames become the history of the next (``env.obs_history`` > 1)."""
        self.state.past_frames = self.history.past_of(obs["policy"])
