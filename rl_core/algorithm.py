"""An on-policy algorithm owns its rollout: the runner's loop is

    actions = alg.act(obs)                      # the policy's step (normalizers updated first)
    step = EnvStep.of(env.step(actions), ...)   # the env's answer, on the policy's device, finite
    invalid = alg.record(step)                  # one Transition into the algorithm's storage
    ...                                         # T steps
    rollout_log = alg.finish_rollout(obs)       # returns, advantages (PPO), the rollout's scalars
    losses = alg.update()

and it never asks which algorithm it runs. PPO (``rl_core/ppo.py``) and distillation (``rl_core/distillation.py``)
are registered in ``rl_core/algorithms.py`` under their ``algorithm.name``.

What every algorithm shares lives here: the storage, the recurrent state carried through the rollout, and the
last line of defence against a broken env (any env, Gym tasks too): a transition that started or ended in a
non-finite observation, or whose reward or value is not finite, or that the env marked ``invalid``, gets weight 0
and teaches nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from rl_core.config import AlgorithmConfig, TrainConfig
from rl_core.env_api import FiniteOutputs, Obs, StepInfo, VecEnv
from rl_core.learner import Learner
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.normalizer import ReturnNormalizer
from rl_core.modules.recurrent_steps import init_hidden, value_with_state
from rl_core.storage import RolloutStorage
from rl_core.transition import Transition


def finite_obs(obs: Obs) -> tuple[Obs, torch.Tensor]:
    """``obs`` with non-finite values replaced by 0, and ``[N]`` bool: the env's observation had one (on the
    device, no host sync). Integer (pixel) observations are always finite."""
    finite: torch.Tensor | None = None
    out = {}
    for k, v in obs.items():
        if v.is_floating_point():
            row_finite = torch.isfinite(v).flatten(1).all(dim=1)
            finite = row_finite if finite is None else finite & row_finite
            v = torch.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0)
        out[k] = v
    first = next(iter(obs.values()))
    return out, ~finite if finite is not None else torch.zeros(first.shape[0], dtype=torch.bool, device=first.device)


def checked_obs(env: VecEnv, obs: Obs, device: torch.device) -> tuple[Obs, torch.Tensor | None]:
    """An env's observations on ``device``, finite, and ``[N]`` bool: a row was not (None: the env guarantees
    finite outputs, ``rl_core.env_api.FiniteOutputs``, so nothing is checked)."""
    obs = {k: v.to(device, non_blocking=True) for k, v in obs.items()}
    if isinstance(env, FiniteOutputs) and env.outputs_finite:
        return obs, None
    return finite_obs(obs)


def any_of(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """The union of the given ``[N]`` bool masks (None entries left out; None if all are)."""
    out: torch.Tensor | None = None
    for m in masks:
        if m is not None:
            out = m if out is None else out | m
    return out


@dataclass
class EnvStep:
    """The env's answer to one step, moved to the policy's device, every value finite."""

    obs: Obs
    """The next observations (non-finite values replaced by 0)."""
    rewards: torch.Tensor
    """``[N]`` rewards (non-finite ones replaced by 0)."""
    terminated: torch.Tensor
    truncated: torch.Tensor
    info: StepInfo
    obs_bad: torch.Tensor | None
    """``[N]`` bool: the env's next observation was not finite (None: the env guarantees finite outputs)."""
    reward_bad: torch.Tensor | None
    """``[N]`` bool: the env's reward was not finite (None: the env guarantees finite outputs)."""

    @classmethod
    def of(cls, env: VecEnv, out: tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo],
           device: torch.device) -> EnvStep:
        """``env.step``'s result on ``device``; checked for non-finite values unless the env guarantees them
        (``rl_core.env_api.FiniteOutputs``: it cleans its own and marks those transitions invalid)."""
        obs, rewards, terminated, truncated, info = out
        obs, obs_bad = checked_obs(env, obs, device)
        rewards, terminated, truncated = (x.to(device) for x in (rewards, terminated, truncated))
        if obs_bad is None:
            return cls(obs, rewards, terminated, truncated, info, None, None)
        reward_finite = torch.isfinite(rewards)
        rewards = torch.where(reward_finite, rewards, 0.0)  # a scalar fill: no zeros tensor per step
        return cls(obs, rewards, terminated, truncated, info, obs_bad, ~reward_finite)

    @property
    def done(self) -> torch.Tensor:
        return self.terminated | self.truncated


class Algorithm(Learner):
    """An on-policy learner with its rollout (see the module docstring). Subclasses implement ``act``, the
    ``Transition`` fields of ``_complete`` and ``update``."""

    LOG_NAMES: ClassVar[dict[str, str]]

    def __init__(self, policy: ActorCritic, cfg: AlgorithmConfig, total_iterations: int, device: torch.device,
                 params: list[nn.Parameter], num_envs: int, steps_per_env: int, generator: torch.Generator):
        super().__init__(params, cfg, total_iterations, device)
        self.policy, self.generator, self.num_envs, self.device = policy, generator, num_envs, device
        self.storage = RolloutStorage(steps_per_env, num_envs, device)
        self.hidden: torch.Tensor | None = init_hidden(policy, num_envs, device)
        """Recurrent policies: the actor-critic state before the next step, ``[K, L, N, H]`` (None otherwise)."""
        self.obs_bad: torch.Tensor | None = None
        """``[N]`` bool: the observation the next step acts on was not finite (None: all were)."""
        self.reward_normalizer: ReturnNormalizer | None = None
        """Scales the rewards learned from (``algorithm.normalize_rewards``; PPO only)."""
        self._pending: Transition | None = None
        """What ``act`` computed of the step under way."""
        self._next_hidden: torch.Tensor | None = None

    @classmethod
    def prepare(cls, cfg: AlgorithmConfig, resumed: dict[str, Any] | None, source: str) -> dict[str, Any] | None:
        """What the algorithm reads before any env is built (one-line errors early): ``resumed`` is the checkpoint
        being resumed (None: a fresh run). Returns what ``build`` takes as ``prepared`` (None: nothing)."""
        return None

    @classmethod
    def build(cls, policy: ActorCritic, cfg: TrainConfig, env: VecEnv, generator: torch.Generator,
              prepared: dict[str, Any] | None) -> Algorithm:
        """The algorithm of ``cfg`` for ``policy`` on ``env`` (``prepared``: what ``prepare`` returned)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------ rollout
    def restart(self, obs_bad: torch.Tensor | None = None) -> None:
        """Every env starts a new episode (the zero recurrent state); ``obs_bad``: their first observations'."""
        self.hidden = init_hidden(self.policy, self.num_envs, self.device)
        self.obs_bad = obs_bad

    def start_rollout(self) -> None:
        self.storage.clear()

    def act(self, obs: Obs) -> torch.Tensor:
        """The actions for the env (sampled from the policy on ``obs``; the step's record starts here)."""
        raise NotImplementedError

    def _env_action(self, actions: torch.Tensor) -> torch.Tensor:
        return self.policy.head.env_action(actions)

    def _values_bad(self, transition: Transition) -> torch.Tensor | None:
        """``[N]`` bool: the step's value is not finite (it is then stored as 0); None without values."""
        values = transition.values
        if values is None:
            return None
        finite = torch.isfinite(values)
        transition.values = torch.where(finite, values, 0.0)
        return ~finite

    def _final_values(self, step: EnvStep) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """V(final observation) of the truncated envs and ``[N]`` bool where it is not finite (None, None: the
        algorithm bootstraps nothing)."""
        return None, None

    def _learn_rewards(self, step: EnvStep) -> torch.Tensor | None:
        """The rewards the update learns from (None: it learns from none)."""
        return None

    def record(self, step: EnvStep) -> torch.Tensor:
        """Store the step ``act`` began, with its validity; returns ``[N]`` bool: the transition is invalid (not
        learned from, its episode left out of the statistics)."""
        tr = self._pending
        assert tr is not None, "record() follows act()"
        final_values, final_bad = self._final_values(step)
        env_invalid = step.info.get("invalid")
        invalid = any_of(step.obs_bad, self.obs_bad, step.reward_bad, self._values_bad(tr), final_bad,
                         None if env_invalid is None else env_invalid.to(self.device))
        if invalid is None:
            invalid = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        self.obs_bad = step.obs_bad
        tr.rewards, tr.final_values = self._learn_rewards(step), final_values
        tr.terminated, tr.truncated, tr.weights = step.terminated, step.truncated, (~invalid).float()
        self.storage.add(tr)
        if self._next_hidden is not None:  # a new episode starts from the zero state (no host sync)
            self.hidden = self._next_hidden.masked_fill_((step.done | invalid).view(1, 1, -1, 1), 0.0)
        self._pending = None
        return invalid

    def finish_rollout(self, last_obs: Obs) -> dict[str, torch.Tensor]:
        """After the rollout's last step (``last_obs``: the observation the next rollout starts from): what the
        update needs from the whole rollout; returns the rollout's scalars (on device), ``invalid_transitions``
        among them."""
        return {"invalid_transitions": (self.storage.weights == 0).sum().float()}

    def update(self) -> dict[str, torch.Tensor]:
        """Learn from the stored rollout; returns per-iteration means (on device) named in ``LOG_NAMES``."""
        raise NotImplementedError

    def bootstrap_values(self, obs: Obs) -> torch.Tensor:
        """V(``obs``) in the current recurrent state (NaN where the observation was not finite)."""
        policy = self.policy
        critic = obs["critic"] if policy.asymmetric else obs["policy"]
        values = value_with_state(policy, policy.critic_obs_normalizer(critic), self.hidden)
        return values if self.obs_bad is None else torch.where(self.obs_bad, torch.full_like(values, math.nan),
                                                                  values)
