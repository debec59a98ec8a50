"""Teacher-student distillation (DAgger), as rsl_rl 5's ``Distillation``: the student (the runner's policy) acts,
a frozen teacher labels every step with its deterministic action, and the student's mean action is regressed onto
the labels over epochs x minibatches shaped as PPO's (shuffled samples; whole trajectory segments for recurrent
students).

The teacher is rebuilt from its checkpoint alone (its policy config, observation widths and weights; loaded with
``weights_only=True``) and kept, weights included, in ``Distillation.state_dict`` (so in every student checkpoint):
resume and ``play.py`` never read the teacher's file again. It reads the env observation group
``algorithm.teacher_obs`` (e.g. ``critic``: the privileged, noise-free observation) through its own frozen
normalizer. Only the actor (its MLP, memory and encoder) is trained; the critic and the action std are not (the
loss reads the mean action only, so the std stays at ``policy.init_noise_std``, as in rsl_rl).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from contract.errors import CheckpointError, ConfigError, UserError
from rl_core import checkpoint as ckpt
from rl_core import distributed
from rl_core.algorithm import Algorithm
from rl_core.config import AlgorithmConfig, PolicyConfig, TrainConfig
from rl_core.config_io import from_dict
from rl_core.env_api import ActionSpec, Obs, VecEnv
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.recurrent_steps import actor_step, sequence_params
from rl_core.storage import gather
from rl_core.transition import Transition


def load_teacher(path: str) -> dict[str, Any]:
    """The teacher record of a checkpoint file or run folder (its newest checkpoint that verifies): what
    ``Distillation`` rebuilds the teacher from, and what it keeps in the student's checkpoints. Checks what can be
    checked without the env (a memoryless, continuous-action, observation-vector policy); one-line errors."""
    source, data = ckpt.load_newest(path)
    record = {
        "source": str(source),
        "task": str(data["task"]),
        "iteration": int(data["iteration"]),
        "policy_config": dict(data["config"].get("policy", {})),
        "obs_dims": {str(k): int(v) for k, v in data["obs_dims"].items()},
        "action_spec": dict(data["action_spec"]),
        "policy": {k: v.clone() for k, v in data["policy"].items()},
    }
    teacher_policy_config(record)
    return record


def teacher_policy_config(record: dict[str, Any]) -> PolicyConfig:
    """The teacher's policy config, checked: continuous actions, no memory, an MLP on observation vectors."""
    source = record["source"]
    try:
        cfg = from_dict(PolicyConfig(), record["policy_config"])
    except UserError as e:
        raise CheckpointError(f"checkpoint error: teacher {source} holds a policy config this version cannot read "
                              f"({e})") from None
    if record["action_spec"].get("discrete"):
        raise ConfigError("algorithm.teacher", source, "a teacher with continuous actions (this one is discrete)")
    if cfg.recurrent:
        raise ConfigError("algorithm.teacher", source,
                          f"a memoryless teacher (this one has policy.memory={cfg.memory})")
    if cfg.encoder != "mlp":
        raise ConfigError("algorithm.teacher", source, f"a teacher with policy.encoder=mlp (this one: {cfg.encoder})")
    if "policy" not in record["obs_dims"]:
        raise CheckpointError(f"checkpoint error: teacher {source} has no policy observation width")
    return cfg


def build_teacher(record: dict[str, Any], obs_dims: dict[str, int], action_spec: ActionSpec, teacher_obs: str,
                  device: torch.device) -> ActorCritic:
    """The frozen teacher (evaluation mode, no gradients) for an env with ``obs_dims`` and ``action_spec``;
    one-line errors where it does not fit."""
    source = record["source"]
    cfg = teacher_policy_config(record)
    if teacher_obs not in obs_dims:
        raise ConfigError("algorithm.teacher_obs", teacher_obs,
                          f"one of this env's observation groups: {', '.join(obs_dims)}")
    n = int(record["action_spec"]["n"])
    if n != action_spec.n:
        raise ConfigError("algorithm.teacher", source,
                          f"a teacher with {action_spec.n} actions, as this env has (this one has {n})")
    width = int(record["obs_dims"]["policy"])
    if width != obs_dims[teacher_obs]:
        raise ConfigError("algorithm.teacher", source,
                          f"a teacher whose policy observation has {obs_dims[teacher_obs]} values, the width of this "
                          f"env's '{teacher_obs}' group (algorithm.teacher_obs); this one reads {width}")
    spec = ActionSpec(discrete=False, n=n, low=action_spec.low, high=action_spec.high)
    teacher = ActorCritic(width, record["obs_dims"].get("critic"), spec, cfg)
    try:
        teacher.load_state_dict(record["policy"])
    except RuntimeError:
        raise CheckpointError(f"checkpoint error: teacher {source}: its weights do not fit its own config") from None
    teacher.requires_grad_(False)
    return teacher.to(device).eval()


def distillation_loss(policy: ActorCritic, batch: dict[str, torch.Tensor], kind: str) -> torch.Tensor:
    """Mean over the valid samples (weight 1) of the per-element loss between the student's mean action and the
    teacher's action, averaged over the action's elements. Pure: reads ``batch``, changes nothing."""
    if "hidden" in batch:  # recurrent: padded trajectory segments [T, M, ...] from their initial states
        params = sequence_params(policy, batch["obs"], batch["hidden"])
    else:
        params = policy.dist_params(batch["obs"])
    student, target = policy.head.mode(params), batch["teacher_actions"]
    if kind == "huber":
        per_element = nn.functional.huber_loss(student, target, reduction="none", delta=1.0)
    else:
        per_element = (student - target).square()
    w = batch["weights"]
    return (per_element.mean(-1) * w).sum() / w.sum().clamp(min=1.0)


class Distillation(Algorithm):
    """Owns the teacher, the student's optimizer and the learning rate, and the rollout (``Algorithm``): the
    student acts, the teacher labels every step, and ``update`` regresses the student onto the labels."""

    LOG_NAMES = {"Loss/distillation": "distillation_loss", "Loss/learning_rate": "learning_rate",
                 "Loss/grad_norm": "grad_norm", "Loss/minibatch_updates": "num_minibatch_updates"}

    def __init__(self, policy: ActorCritic, cfg: AlgorithmConfig, total_iterations: int, device: torch.device,
                 obs_dims: dict[str, int], action_spec: ActionSpec, num_envs: int, steps_per_env: int,
                 generator: torch.Generator, teacher: dict[str, Any] | None = None):
        """``teacher``: a record of ``load_teacher`` (or of a student checkpoint); None: load ``cfg.teacher``."""
        if action_spec.discrete:
            raise ConfigError("algorithm.name", cfg.name, "'ppo' for a task with discrete actions (distillation "
                              "regresses continuous actions)")
        if teacher is None:
            if cfg.teacher is None:
                raise ConfigError("algorithm.teacher", None, "a checkpoint file or run folder of the teacher with "
                                  "algorithm.name=distillation")
            teacher = load_teacher(cfg.teacher)
        self.obs_dims, self.action_spec = dict(obs_dims), action_spec
        self.teacher_record = teacher
        self.teacher = build_teacher(teacher, self.obs_dims, action_spec, cfg.teacher_obs, device)
        # The actor alone: the critic is not trained, and the std gets no gradient from a loss on the mean.
        skip = {id(p) for p in policy.critic_parameters()} | {id(p) for p in policy.head.parameters()}
        self._params = [p for p in policy.parameters() if id(p) not in skip]
        super().__init__(policy, cfg, total_iterations, device, self._params, num_envs, steps_per_env, generator)

    @classmethod
    def prepare(cls, cfg: AlgorithmConfig, resumed: dict[str, Any] | None, source: str) -> dict[str, Any]:
        """The teacher record, read and checked before any env is built: from ``algorithm.teacher``, or the one
        stored in the checkpoint being resumed (whose ``algorithm.teacher`` must then be the same)."""
        if resumed is not None:
            saved = resumed.get("config", {}).get("algorithm", {})
            if cfg.teacher != saved.get("teacher"):
                raise ConfigError("algorithm.teacher", cfg.teacher, f"{saved.get('teacher')!r} when resuming (the "
                                  "checkpoint holds its teacher)")
            record = resumed.get("algorithm", {}).get("teacher")
            if record is None:
                raise CheckpointError(f"checkpoint error: {source} holds no distillation teacher")
            return record
        if cfg.teacher is None:
            raise ConfigError("algorithm.teacher", None, "a checkpoint file or run folder of the teacher with "
                              "algorithm.name=distillation, e.g. algorithm.teacher=runs/quadruped-flat/<run>")
        return load_teacher(cfg.teacher)

    @classmethod
    def build(cls, policy: ActorCritic, cfg: TrainConfig, env: VecEnv, generator: torch.Generator,
              prepared: dict[str, Any] | None) -> Distillation:
        return cls(policy, cfg.algorithm, cfg.total_iterations, torch.device(cfg.runner.device), env.obs_dims,
                   env.action_spec, env.num_envs, cfg.runner.num_steps_per_env, generator, prepared)

    @torch.no_grad()
    def label(self, teacher_obs: torch.Tensor) -> torch.Tensor:
        """The teacher's deterministic action on raw observations of group ``cfg.teacher_obs``."""
        return self.teacher.act_inference(teacher_obs)

    def act(self, obs: Obs) -> torch.Tensor:
        """DAgger: the student acts (actor only, normalizer updated first) and the teacher labels the same step."""
        policy = self.policy
        policy.update_normalizers(obs["policy"], None)
        obs_n = policy.obs_normalizer(obs["policy"])
        params, self._next_hidden = actor_step(policy, obs_n, self.hidden)
        actions = policy.head.sample(params, self.generator)
        self._pending = Transition(obs=obs_n, teacher_actions=self.label(obs[self.cfg.teacher_obs]),
                                   hidden=self.hidden)
        return self._env_action(actions)

    def _step(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """One minibatch: loss, gradients (averaged over ranks), clipping, the Adam step (skipped on the device when
        the loss or gradient is not finite, no host sync)."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = distillation_loss(self.policy, batch, self.cfg.distillation_loss)
        loss.backward()
        distributed.average_gradients_(self._params)
        grad_norm = nn.utils.clip_grad_norm_(self._params, self.cfg.max_grad_norm)
        nonfinite = self._guarded_step(loss, grad_norm)
        return {"distillation_loss": loss.detach(), "grad_norm": grad_norm.detach(), "nonfinite": nonfinite}

    def update(self) -> dict[str, torch.Tensor]:
        """Epochs x minibatches of the distillation loss; returns per-iteration means (on device)."""
        cfg, storage, generator = self.cfg, self.storage, self.generator
        batches: Iterator[dict[str, torch.Tensor]]
        if storage.hidden is not None:
            batches = storage.recurrent_minibatches(cfg.num_mini_batches, cfg.num_learning_epochs, generator)
        else:
            flat = storage.flat()
            batches = (gather(flat, idx) for idx in
                       storage.minibatch_indices(cfg.num_mini_batches, cfg.num_learning_epochs, generator))
        return self._means(self._step(batch) for batch in batches)

    # -- checkpoint
    def state_dict(self) -> dict:
        """Optimizer, learning rate and the teacher record (its weights included)."""
        return {**super().state_dict(), "teacher": self.teacher_record}

    def load_state_dict(self, state: dict) -> None:
        """Restore; the teacher is rebuilt from the record in ``state`` (its file is not read)."""
        if "teacher" not in state:
            raise CheckpointError("checkpoint error: this checkpoint holds no distillation teacher")
        self.teacher_record = state["teacher"]
        self.teacher = build_teacher(self.teacher_record, self.obs_dims, self.action_spec, self.cfg.teacher_obs,
                                     self.device)
        super().load_state_dict(state)
