"""AMP: PPO whose reward mixes the env's task reward with a discriminator's style reward (``algorithm.name=amp``).

The env supplies what is judged (``rl_core.env_api.MotionPrior``): an AMP observation of its state and reference
transitions from motion clips; rl_core knows nothing of either. In the rollout each step's transition (s, s') is
stored with the PPO transition (``amp_obs`` / ``amp_next_obs``; s' is the state the step reached, before a reset)
and rewarded ``task_weight x task + style_weight x style(D(s, s'))``. In the update every PPO minibatch also
trains the discriminator (its own Adam) on that minibatch's transitions against as many reference transitions
(``rl_core/modules/discriminator.py``), then updates its normalizer with both. Task and style rewards are logged
apart (``AMP/task_reward``, ``AMP/style_reward``); the discriminator, its normalizer and optimizer go into the
checkpoint (exact resume) and never into an export.
"""

from __future__ import annotations

from typing import Any

import torch

from contract.errors import ConfigError
from rl_core.algorithm import EnvStep
from rl_core.config import AlgorithmConfig, TrainConfig
from rl_core.env_api import MotionPrior, Obs, VecEnv
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.discriminator import Discriminator, discriminator_loss, style_reward
from rl_core.ppo import PPO
from rl_core.symmetry import Mirrors, mirrors_of

AMP_FIELDS = ("amp_obs", "amp_next_obs")
"""The transition fields of the discriminator's samples."""


class AmpPPO(PPO):
    """PPO with adversarial motion priors (see the module docstring)."""

    LOG_NAMES = {**PPO.LOG_NAMES, "AMP/disc_loss": "amp_loss", "AMP/grad_penalty": "amp_grad_penalty",
                 "AMP/expert_d": "amp_expert_d", "AMP/policy_d": "amp_policy_d",
                 "AMP/style_reward": "amp_style_reward", "AMP/task_reward": "amp_task_reward"}

    def __init__(self, policy: ActorCritic, cfg: AlgorithmConfig, total_iterations: int, device: torch.device,
                 num_envs: int, steps_per_env: int, generator: torch.Generator, source: MotionPrior, *,
                 mirrors: Mirrors | None = None):
        super().__init__(policy, cfg, total_iterations, device, num_envs, steps_per_env, generator, mirrors=mirrors)
        self._graphed = None  # the discriminator's step runs eagerly next to each minibatch
        self.source = source
        self.discriminator = Discriminator(source.amp_obs_dim, cfg.amp.hidden_dims).to(device)
        self.disc_optimizer = torch.optim.Adam(self.discriminator.net.parameters(), lr=cfg.amp.learning_rate,
                                               weight_decay=cfg.amp.weight_decay)
        self._prev: torch.Tensor | None = None
        """The AMP observation of the state the next step acts on (None: read it from the env first)."""
        self._sums = torch.zeros(2, device=device)
        """Rollout sums of the per-step mean task and style rewards."""

    @classmethod
    def build(cls, policy: ActorCritic, cfg: TrainConfig, env: VecEnv, generator: torch.Generator,
              prepared: dict[str, Any] | None) -> AmpPPO:
        if not isinstance(env, MotionPrior):
            raise ConfigError("algorithm.name", "amp", "ppo for this task: its env offers no AMP observation "
                              "(rl_core.env_api.MotionPrior; a locomotion task with env.amp_clips does)")
        mirrors = mirrors_of(env)
        return cls(policy, cfg.algorithm, cfg.total_iterations, torch.device(cfg.runner.device), env.num_envs,
                   cfg.runner.num_steps_per_env, generator, env, mirrors=mirrors)

    # ------------------------------------------------------------------------------------ rollout
    def restart(self, obs_bad: torch.Tensor | None = None) -> None:
        super().restart(obs_bad)
        self._prev = None

    def start_rollout(self) -> None:
        super().start_rollout()
        self._sums.zero_()

    def act(self, obs: Obs) -> torch.Tensor:
        if self._prev is None:
            self._prev = self.source.amp_observation().to(self.device)
        actions = super().act(obs)
        assert self._pending is not None
        self._pending.amp_obs = self._prev
        return actions

    def _learn_rewards(self, step: EnvStep) -> torch.Tensor:
        """``task_weight x task + style_weight x style`` (then PPO's reward normalization, if on)."""
        cfg, tr = self.cfg.amp, self._pending
        assert tr is not None and tr.amp_obs is not None
        s_next = torch.nan_to_num(step.info["amp_obs"].to(self.device))
        tr.amp_next_obs = s_next
        with torch.no_grad():
            style = style_reward(self.discriminator(self.discriminator.inputs(tr.amp_obs, s_next)))
        self._sums += torch.stack([step.rewards.mean(), style.mean()])
        mixed = cfg.task_weight * step.rewards + cfg.style_weight * style
        return mixed if self.reward_normalizer is None else self.reward_normalizer(mixed, step.done)

    def record(self, step: EnvStep) -> torch.Tensor:
        invalid = super().record(step)
        self._prev = torch.nan_to_num(self.source.amp_observation().to(self.device))  # after this step's resets
        return invalid

    # ------------------------------------------------------------------------------------ update
    def _discriminator_step(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """One Adam step of the discriminator on a minibatch's transitions against as many reference ones; then
        its normalizer learns both."""
        n = batch["amp_obs"].shape[0]
        ref_obs, ref_next = self.source.amp_reference(n, self.generator)
        expert = (ref_obs.to(self.device), ref_next.to(self.device))
        policy = (batch["amp_obs"], batch["amp_next_obs"])
        weights = batch["weights"]
        with torch.inference_mode(False), torch.enable_grad():
            loss, metrics = discriminator_loss(self.discriminator, policy, weights, expert, self.cfg.amp.grad_penalty)
            self.disc_optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.disc_optimizer.step()
        valid = weights > 0
        self.discriminator.normalizer.update(torch.cat([policy[0][valid], expert[0]]))
        return metrics

    def _minibatch(self, flat: dict[str, torch.Tensor], idx: torch.Tensor) -> dict[str, torch.Tensor]:
        metrics = super()._minibatch(flat, idx)
        batch = {k: torch.index_select(flat[k], 0, idx) for k in (*AMP_FIELDS, "weights")}
        return {**metrics, **self._discriminator_step(batch)}

    def _recurrent_minibatch(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        metrics = super()._recurrent_minibatch(batch)
        return {**metrics, **self._discriminator_step(batch)}

    def update(self) -> dict[str, torch.Tensor]:
        out = super().update()
        means = self._sums / self.storage.T
        out["amp_task_reward"], out["amp_style_reward"] = means[0], means[1]
        return out

    # ------------------------------------------------------------------------------------ checkpoint
    def state_dict(self) -> dict:
        return {**super().state_dict(), "amp": {"discriminator": self.discriminator.state_dict(),
                                                "optimizer": self.disc_optimizer.state_dict()}}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self.discriminator.load_state_dict(state["amp"]["discriminator"])
        self.disc_optimizer.load_state_dict(state["amp"]["optimizer"])
