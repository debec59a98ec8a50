"""PPO: the loss as a pure function, the rollout (``rl_core/algorithm.py``) and the update loop (epochs x shuffled
minibatches, lr schedules)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from contract.errors import ConfigError
from rl_core import distributed
from rl_core.algorithm import Algorithm, EnvStep, any_of, finite_obs
from rl_core.config import AlgorithmConfig, TrainConfig
from rl_core.env_api import Obs, VecEnv
from rl_core.graphed_update import GraphedMinibatch
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.normalizer import ReturnNormalizer
from rl_core.modules.recurrent_steps import rollout_step, sequence_params_and_value, value_with_state
from rl_core.storage import gather
from rl_core.symmetry import Mirrors, augment, mirrors_of, on_normalized
from rl_core.transition import Transition

LR_MIN, LR_MAX = 1e-5, 1e-2
"""The adaptive schedule's bounds on the learning rate."""


def normalize(x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Zero mean, unit (unbiased) std over the samples of weight 1 (of every rank under torchrun)."""
    sums = distributed.all_reduce_sum_(torch.stack([weights.sum(), (x * weights).sum()]))
    n = sums[0]
    mean = sums[1] / n.clamp(min=1.0)
    var = distributed.all_reduce_sum_(((x - mean).square() * weights).sum()) / (n - 1.0).clamp(min=1.0)
    return (x - mean) / (var.sqrt() + 1e-8)


def ppo_loss(policy: ActorCritic, batch: dict[str, torch.Tensor], cfg: AlgorithmConfig
             ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Total loss and detached metrics for one minibatch. Pure: reads ``batch``, changes nothing.

    Every mean is over the samples of weight 1 (``batch["weights"]``): transitions of diverged physics have
    weight 0 and teach nothing.
    """
    head = policy.head
    w = batch["weights"]
    w_sum = w.sum().clamp(min=1.0)

    def mean(x: torch.Tensor) -> torch.Tensor:
        return (x * w).sum() / w_sum

    if "hidden" in batch:  # recurrent: padded trajectory segments [T, M, ...] from their initial states
        params, values = sequence_params_and_value(policy, batch["obs"], batch["critic_obs"], batch["hidden"])
    else:
        params, values = policy.params_and_value(batch["obs"], batch["critic_obs"])
    log_probs = head.log_prob(params, batch["actions"])
    entropy = mean(head.entropy(params))

    advantages = batch["advantages"]
    if cfg.normalize_advantage_per_minibatch:
        advantages = normalize(advantages, w)

    log_ratio = log_probs - batch["log_probs"]
    ratio = torch.exp(log_ratio)
    clipped_ratio = ratio.clamp(1.0 - cfg.clip_param, 1.0 + cfg.clip_param)
    surrogate = mean(torch.max(-advantages * ratio, -advantages * clipped_ratio))

    returns, old_values = batch["returns"], batch["values"]
    if cfg.use_clipped_value_loss:
        clipped = old_values + (values - old_values).clamp(-cfg.clip_param, cfg.clip_param)
        value_loss = mean(torch.max((values - returns).square(), (clipped - returns).square()))
    else:
        value_loss = mean((values - returns).square())

    loss = surrogate + cfg.value_loss_coef * value_loss - cfg.entropy_coef * entropy
    with torch.no_grad():
        metrics = {
            "surrogate_loss": surrogate.detach(),
            "value_loss": value_loss.detach(),
            "entropy": entropy.detach(),
            "kl": kl_mean(head.kl(batch["dist_params"], params), batch.get("kl_weights", w)),
            "approx_kl": mean((ratio - 1.0) - log_ratio),
            "clip_fraction": mean(((ratio - 1.0).abs() > cfg.clip_param).float()),
        }
    return loss, metrics


def kl_mean(kl: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Mean KL over the samples of weight 1 (symmetry augmentation leaves its mirrored rows out)."""
    return (kl * weights).sum() / weights.sum().clamp(min=1.0)


def adaptive_lr(lr: torch.Tensor, kl: torch.Tensor, desired_kl: float) -> torch.Tensor:
    """rsl_rl / Brax rule without a host sync: shrink by 1.5 if KL > 2x target, grow by 1.5 if 0 < KL < target/2."""
    down = torch.clamp(lr / 1.5, min=LR_MIN)
    up = torch.clamp(lr * 1.5, max=LR_MAX)
    return torch.where(kl > 2.0 * desired_kl, down, torch.where((kl > 0) & (kl < 0.5 * desired_kl), up, lr))


class PPO(Algorithm):
    """Proximal Policy Optimization with its rollout (``Algorithm``): samples actions with their log-probabilities
    and values, bootstraps truncated episodes from V(final observation), computes GAE after the rollout and runs
    epochs x shuffled minibatches of ``ppo_loss``."""

    LOG_NAMES = {
        "Loss/value": "value_loss", "Loss/surrogate": "surrogate_loss", "Loss/entropy": "entropy",
        "Loss/learning_rate": "learning_rate", "Loss/grad_norm": "grad_norm", "Policy/kl": "kl",
        "Policy/approx_kl": "approx_kl", "Policy/clip_fraction": "clip_fraction", "Policy/entropy": "entropy",
        "Loss/minibatch_updates": "num_minibatch_updates",
    }

    def __init__(self, policy: ActorCritic, cfg: AlgorithmConfig, total_iterations: int, device: torch.device,
                 num_envs: int, steps_per_env: int, generator: torch.Generator, *, mirrors: Mirrors | None = None):
        """``mirrors``: the env's mirror functions (``rl_core.env_api.Symmetric``), needed by ``cfg.symmetry``."""
        self._mirror_obs = self._check_symmetry(policy, cfg, mirrors)
        self._mirror_actions = mirrors.actions if mirrors is not None else None
        mirror = mirrors.critic if mirrors is not None and policy.asymmetric and self._mirror_obs is not None else None
        self._mirror_critic_obs = on_normalized(mirror, policy.critic_obs_normalizer) if mirror is not None else None
        """The critic group's mirror on its normalized observations (None: symmetry off or a symmetric critic)."""
        super().__init__(policy, cfg, total_iterations, device, list(policy.parameters()), num_envs, steps_per_env,
                         generator)
        self._loss_backward = torch.compile(self._loss_and_backward) if cfg.compile else self._loss_and_backward
        critic = policy.critic_parameters()
        critic_ids = {id(p) for p in critic}
        actor = [p for p in policy.parameters() if id(p) not in critic_ids]  # actor MLP, action std, encoder...
        self._groups = [actor, critic] if cfg.clip_grad_per_network else [actor + critic]
        self._params = actor + critic
        # Recurrent policies take the eager path: their minibatches (trajectory segments) change shape.
        self.graph_capturable = not policy.is_recurrent
        """Whether a minibatch update has fixed shapes (a CUDA graph replays it on a GPU, single process), with or
        without symmetry augmentation."""
        graphed = cfg.cuda_graph and device.type == "cuda" and distributed.world_size() == 1 and self.graph_capturable
        self._graphed = GraphedMinibatch(self._minibatch, device) if graphed else None
        if cfg.normalize_rewards:
            self.reward_normalizer = ReturnNormalizer(num_envs, cfg.gamma, device)

    @property
    def graphed_update(self) -> GraphedMinibatch | None:
        """The minibatch update replayed as a CUDA graph (``graph`` is None until its capture), or None: eager."""
        return self._graphed

    @classmethod
    def build(cls, policy: ActorCritic, cfg: TrainConfig, env: VecEnv, generator: torch.Generator,
              prepared: dict[str, Any] | None) -> PPO:
        return cls(policy, cfg.algorithm, cfg.total_iterations, torch.device(cfg.runner.device), env.num_envs,
                   cfg.runner.num_steps_per_env, generator, mirrors=mirrors_of(env))

    # ------------------------------------------------------------------------------------ rollout
    def act(self, obs: Obs) -> torch.Tensor:
        """Sample from the policy on ``obs`` (normalizers updated first), with log-probabilities and values."""
        policy, head = self.policy, self.policy.head
        critic_obs = obs.get("critic")
        policy.update_normalizers(obs["policy"], critic_obs)
        obs_n = policy.obs_normalizer(obs["policy"])
        critic_n = policy.critic_obs_normalizer(critic_obs) if policy.asymmetric else obs_n
        params, values, self._next_hidden = rollout_step(policy, obs_n, critic_n, self.hidden)
        actions = head.sample(params, self.generator)
        self._pending = Transition(obs=obs_n, critic_obs=critic_n if policy.asymmetric else None, actions=actions,
                                   log_probs=head.log_prob(params, actions), dist_params=params, values=values,
                                   hidden=self.hidden)
        return self._env_action(actions)

    def _final_values(self, step: EnvStep) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """V(final observation) of the envs that ended this step (0 where it or its value is not finite), and
        ``[N]`` bool: a truncated env whose bootstrap value is not finite. With memory the final observation
        continues the finished episode, so it is read in the state after this step (before the reset)."""
        final_obs = step.info.get("final_obs")
        if final_obs is None:
            return torch.zeros(self.num_envs, device=self.device), None
        policy = self.policy
        final_critic = final_obs["critic" if policy.asymmetric else "policy"].to(self.device, non_blocking=True)
        final_bad: torch.Tensor | None = None
        if step.obs_bad is not None:  # the env does not guarantee finite observations
            cleaned, final_bad = finite_obs({"c": final_critic})
            final_critic = cleaned["c"]
        final_values = value_with_state(policy, policy.critic_obs_normalizer(final_critic), self._next_hidden)
        bad = any_of(final_bad, ~torch.isfinite(final_values))
        assert bad is not None
        bad = bad & step.truncated
        return torch.where(bad, 0.0, final_values), bad

    def _learn_rewards(self, step: EnvStep) -> torch.Tensor:
        if self.reward_normalizer is None:
            return step.rewards
        return self.reward_normalizer(step.rewards, step.done)

    def finish_rollout(self, last_obs: Obs) -> dict[str, torch.Tensor]:
        """GAE over the stored rollout, bootstrapped from V(``last_obs``) (NaN where it was not finite: the storage
        then refuses that value target); the rollout's scalars with the critic's explained variance."""
        self.storage.compute_returns(self.bootstrap_values(last_obs), self.cfg.gamma, self.cfg.lam)
        out = super().finish_rollout(last_obs)
        returns, values = self.storage.returns, self.storage.values
        var = returns.var()
        out["explained_variance"] = torch.where(var > 0, 1.0 - (returns - values).var() / var, torch.zeros_like(var))
        return out

    # ------------------------------------------------------------------------------------ update
    def _loss_and_backward(self, flat: dict[str, torch.Tensor], idx: torch.Tensor
                           ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Gather one minibatch, compute the loss and its gradients (compiled as one graph when cfg.compile)."""
        return self._batch_loss_and_backward(gather(flat, idx))

    @staticmethod
    def _check_symmetry(policy: ActorCritic, cfg: AlgorithmConfig, mirrors: Mirrors | None
                        ) -> Callable[[torch.Tensor], torch.Tensor] | None:
        """The observation mirror on normalized observations when ``cfg.symmetry`` is on (None when off)."""
        if cfg.symmetry == "none":
            return None
        if mirrors is None:
            raise ConfigError("algorithm.symmetry", cfg.symmetry, "'none' for this task: its env offers no mirror "
                              "(rl_core.env_api.Symmetric, e.g. a robot without left/right twin joints)")
        if policy.is_recurrent:
            raise ConfigError("algorithm.symmetry", cfg.symmetry, "'none' with a recurrent policy (policy.memory)")
        if policy.asymmetric and mirrors.critic is None:
            raise ConfigError("algorithm.symmetry", cfg.symmetry, "'none' for this task: its env mirrors the policy "
                              "observations only, not its critic observations (rl_core.env_api.Symmetric)")
        return on_normalized(mirrors.obs, policy.obs_normalizer)

    def _batch_loss_and_backward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        if self._mirror_obs is not None and self._mirror_actions is not None:
            batch = augment(batch, self._mirror_obs, self._mirror_actions, self._mirror_critic_obs)
        loss, metrics = ppo_loss(self.policy, batch, self.cfg)
        loss.backward()
        return loss.detach(), metrics

    def _minibatch(self, flat: dict[str, torch.Tensor], idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """One minibatch: loss and gradients, adaptive lr, clipping, the Adam step (skipped on the device when the
        loss or gradient is not finite). Fixed shapes and no host sync, so a CUDA graph can capture it whole.
        Returns the minibatch's metrics and ``nonfinite`` (1.0 where its step was skipped)."""
        self.optimizer.zero_grad(set_to_none=True)
        return self._optimizer_step(*self._loss_backward(flat, idx))

    def _recurrent_minibatch(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``_minibatch`` on a batch of padded trajectory segments (eager: its shapes change every time)."""
        self.optimizer.zero_grad(set_to_none=True)
        return self._optimizer_step(*self._batch_loss_and_backward(batch))

    def _optimizer_step(self, loss: torch.Tensor, metrics: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        cfg = self.cfg
        distributed.all_reduce_mean_(metrics["kl"])  # one learning rate on every rank
        if cfg.schedule == "adaptive":
            self.lr.copy_(adaptive_lr(self.lr, metrics["kl"], cfg.desired_kl))
        distributed.average_gradients_(self._params)
        norms = [nn.utils.clip_grad_norm_(g, cfg.max_grad_norm) for g in self._groups]  # norms before clipping
        metrics["grad_norm"] = torch.linalg.vector_norm(torch.stack(norms))
        metrics["nonfinite"] = self._guarded_step(loss, metrics["grad_norm"])
        return metrics

    def update(self) -> dict[str, torch.Tensor]:
        """Epochs x minibatches of PPO; returns per-iteration means of the loss metrics (on device)."""
        cfg, storage, generator = self.cfg, self.storage, self.generator
        if not cfg.normalize_advantage_per_minibatch:
            storage.advantages = normalize(storage.advantages, storage.weights)
        steps: Iterator[dict[str, torch.Tensor]]
        if storage.hidden is not None:
            steps = (self._recurrent_minibatch(b) for b in
                     storage.recurrent_minibatches(cfg.num_mini_batches, cfg.num_learning_epochs, generator))
        else:
            flat = storage.flat()
            if self._mirror_obs is not None and self._mirror_actions is not None:
                # symmetry: every sample mirrored once per update (the normalizer is fixed during it), gathered with
                # its minibatch, not mirrored again in each epoch; the same values as mirroring the minibatch
                flat = {**flat, "mirror_obs": self._mirror_obs(flat["obs"]),
                        "mirror_actions": self._mirror_actions(flat["actions"])}
                if self._mirror_critic_obs is not None:
                    flat["mirror_critic_obs"] = self._mirror_critic_obs(flat["critic_obs"])
            indices = storage.minibatch_indices(cfg.num_mini_batches, cfg.num_learning_epochs, generator)
            steps = (self._graphed.run(flat, indices) if self._graphed is not None
                     else (self._minibatch(flat, idx) for idx in indices))
        target_kl = cfg.target_kl
        # opt-in early stop: one sync per minibatch
        return self._means(steps, None if target_kl is None else lambda m: bool(m["kl"] > target_kl))
