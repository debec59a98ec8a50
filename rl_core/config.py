"""Typed, frozen configs of the learner: policy, PPO, runner, and the bundle that train.py resolves.

Each field has a docstring (shown by ``train.py --help``). Every value is checked when the config is built,
so a bad value fails before any environment is created.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Optional

from rl_core.config_io import check_types, require

Activation = Literal["elu", "relu", "tanh", "selu", "gelu", "silu", "leaky_relu"]


@dataclass(frozen=True)
class EnvConfig:
    """Base of every environment config (the env package defines the concrete ones)."""

    num_envs: int = 16
    """Number of environments stepped in lock-step (the batch width of a rollout)."""

    def __post_init__(self) -> None:
        check_types(self, "env.")
        require(self.num_envs >= 1, "env.num_envs", self.num_envs, "an integer >= 1")

    def for_evaluation(self) -> EnvConfig:
        """The config ``play.py`` evaluates with (tasks switch off training-only devices here)."""
        return self


@dataclass(frozen=True)
class PolicyConfig:
    """Actor-critic networks and the action distribution."""

    actor_hidden_dims: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of the actor MLP."""
    critic_hidden_dims: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of the critic MLP (separate network from the actor)."""
    activation: Activation = "elu"
    """Activation function between hidden layers."""
    init_noise_std: float = 1.0
    """Initial standard deviation of the Gaussian action noise (continuous actions)."""
    min_std: float = 0.01
    """Lower bound of the action std; keeps the Gaussian valid (no 'std >= 0' crashes)."""
    max_std: float = 10.0
    """Upper bound of the action std."""
    normalize_obs: bool = True
    """Normalize observations by running mean/variance; the statistics are saved and exported with the policy."""
    obs_clip: float = 10.0
    """Normalized observations are clipped to [-obs_clip, obs_clip]."""
    distribution: Literal["gaussian", "squashed_gaussian"] = "gaussian"
    """Continuous actions: gaussian (the env clips samples to its bounds) or squashed_gaussian (tanh of a Gaussian
    scaled to the action bounds, exact log-probability; bounds [-1, 1] where the env gives none)."""
    orthogonal_init: bool = True
    """Orthogonal weight init (gain sqrt(2) hidden, 0.01 actor output, 1.0 critic output); else torch defaults
    (rsl_rl)."""
    encoder: Literal["mlp", "cnn"] = "mlp"
    """mlp: the MLPs read the observation vector; cnn: a Nature CNN turns uint8 images [C, H, W] (scaled by
    1/255, no running normalizer) into features that the actor / critic MLPs read."""
    share_encoder: bool = False
    """cnn only: one CNN torso for actor and critic (CleanRL's Atari PPO), computed once per batch; else one each."""
    cnn_feature_dim: int = 512
    """cnn only: width of the CNN's output features."""
    memory: Literal["none", "lstm", "gru"] = "none"
    """Recurrent memory in front of the actor and critic MLPs: none, lstm or gru. The actor and the critic each
    have their own; the MLPs (actor_hidden_dims / critic_hidden_dims) read the memory's output. Trained on whole
    trajectory segments of the rollout (truncated backpropagation through time over runner.num_steps_per_env);
    needs env.num_envs divisible by algorithm.num_mini_batches (minibatches are groups of envs)."""
    memory_size: int = 64
    """Width of the recurrent state (hidden units per memory layer); ignored when memory is none."""
    memory_layers: int = 1
    """Stacked recurrent layers of each memory; ignored when memory is none."""

    def __post_init__(self) -> None:
        check_types(self, "policy.")
        for name in ("actor_hidden_dims", "critic_hidden_dims"):
            dims = getattr(self, name)
            require(all(d >= 1 for d in dims), f"policy.{name}", list(dims),
                    "a list of integers >= 1 (empty: a linear layer on the observation / CNN features)")
        require(self.encoder == "cnn" or not self.share_encoder, "policy.share_encoder", self.share_encoder,
                "false unless policy.encoder is cnn")
        require(self.encoder != "cnn" or not self.normalize_obs, "policy.normalize_obs", self.normalize_obs,
                "false with policy.encoder=cnn (pixels are scaled by 1/255)")
        require(self.cnn_feature_dim >= 1, "policy.cnn_feature_dim", self.cnn_feature_dim, "an integer >= 1")
        require(self.init_noise_std > 0, "policy.init_noise_std", self.init_noise_std, "a number > 0")
        require(self.min_std > 0, "policy.min_std", self.min_std, "a number > 0")
        require(self.max_std > self.min_std, "policy.max_std", self.max_std,
                f"a number > policy.min_std ({self.min_std})")
        require(self.obs_clip > 0, "policy.obs_clip", self.obs_clip, "a number > 0")
        require(self.memory_size >= 1, "policy.memory_size", self.memory_size, "an integer >= 1")
        require(self.memory_layers >= 1, "policy.memory_layers", self.memory_layers, "an integer >= 1")
        require(self.memory == "none" or self.encoder == "mlp", "policy.memory", self.memory,
                "none with policy.encoder=cnn (recurrent policies read observation vectors)")

    @property
    def recurrent(self) -> bool:
        """True when the actor and critic carry a recurrent state (memory is lstm or gru)."""
        return self.memory != "none"


@dataclass(frozen=True)
class AmpConfig:
    """Adversarial motion priors (``algorithm.name: amp``, Peng et al. 2021): a discriminator tells the env's
    transitions (s, s') of its AMP observation from reference transitions of motion clips; its style reward
    ``max(0, 1 - 0.25 (d - 1)^2)`` is mixed with the task reward by the two weights below. The discriminator and
    its observation normalizer are checkpointed, never exported."""

    task_weight: float = 1.0
    """Weight of the env's task reward in the reward PPO learns from."""
    style_weight: float = 0.02
    """Weight of the style reward (per step, in [0, 1]): 0.02 puts it on the scale of a locomotion task's terms,
    which are multiplied by the control period (0.02 s)."""
    hidden_dims: tuple[int, ...] = (256, 128)
    """Hidden layer sizes of the discriminator MLP (ReLU) on (s, s') of the normalized AMP observation."""
    learning_rate: float = 5e-4
    """Adam learning rate of the discriminator (its own optimizer, fixed)."""
    weight_decay: float = 1e-4
    """L2 weight decay of the discriminator's parameters."""
    grad_penalty: float = 10.0
    """Weight of the gradient penalty on reference samples: grad_penalty / 2 x mean |dD/dx|^2."""

    def __post_init__(self) -> None:
        check_types(self, "algorithm.amp.")
        for name in ("task_weight", "style_weight", "weight_decay", "grad_penalty"):
            require(getattr(self, name) >= 0, f"algorithm.amp.{name}", getattr(self, name), "a number >= 0")
        require(0 < self.learning_rate < 1, "algorithm.amp.learning_rate", self.learning_rate, "a number in (0, 1)")
        require(all(d >= 1 for d in self.hidden_dims), "algorithm.amp.hidden_dims", list(self.hidden_dims),
                "a list of integers >= 1")


@dataclass(frozen=True)
class AlgorithmConfig:
    """The learning algorithm: Proximal Policy Optimization (rsl_rl names; defaults of the design notes), or
    teacher-student distillation (``name: distillation``), which uses the epoch, minibatch, learning-rate and
    gradient-clip fields and ignores the PPO-only ones (clip, discount, GAE, value and entropy terms)."""

    name: Literal["ppo", "distillation", "amp"] = "ppo"
    """ppo: reinforcement learning from the rewards; distillation: DAgger, as rsl_rl's Distillation: the policy
    (student) acts, a frozen teacher policy labels every step with its deterministic action, and the student's
    mean action is regressed onto the labels (the critic is not trained; the action std stays at
    policy.init_noise_std). Needs a continuous action space and algorithm.teacher. amp: PPO on the task reward
    mixed with a discriminator's style reward (algorithm.amp; the env must offer an AMP observation and reference
    clips, e.g. env.amp_clips of a locomotion task)."""
    teacher: Optional[str] = None
    """distillation: the teacher, a checkpoint file or run folder (its newest checkpoint) of a memoryless policy
    with continuous actions; its weights are copied into the student's checkpoints, so resume and play.py do not
    read this file again. Ignored by ppo."""
    teacher_obs: str = "critic"
    """distillation: the env observation group the teacher reads (its width must be the teacher's policy
    observation width), e.g. critic: the privileged, noise-free observation of a task with a separate critic."""
    distillation_loss: Literal["mse", "huber"] = "mse"
    """distillation: the per-element loss between student and teacher actions, averaged over the valid samples:
    mse (squared error) or huber (delta 1)."""
    num_learning_epochs: int = 5
    """Passes over the rollout per iteration."""
    num_mini_batches: int = 4
    """Minibatches per epoch; num_envs * num_steps_per_env must be divisible by it."""
    clip_param: float = 0.2
    """PPO ratio clip epsilon (also the value-clip range when use_clipped_value_loss)."""
    gamma: float = 0.99
    """Discount factor."""
    lam: float = 0.95
    """GAE lambda."""
    value_loss_coef: float = 1.0
    """Weight of the value loss."""
    use_clipped_value_loss: bool = True
    """Clip the value prediction around the rollout's old value (PPO2 style)."""
    entropy_coef: float = 0.01
    """Weight of the entropy bonus."""
    learning_rate: float = 1e-3
    """Initial Adam learning rate."""
    schedule: Literal["fixed", "linear", "adaptive"] = "adaptive"
    """fixed: constant; linear: decays to 0 over the run; adaptive: rsl_rl KL rule per minibatch (ppo only: it
    needs PPO's KL)."""
    desired_kl: float = 0.01
    """Target KL(old || new) of the adaptive schedule."""
    target_kl: Optional[float] = None
    """If set, stop the epochs of an iteration early once the minibatch KL exceeds it (null: never)."""
    max_grad_norm: float = 1.0
    """Gradient-norm clip: one global norm over actor and critic, or per network (see clip_grad_per_network)."""
    clip_grad_per_network: bool = False
    """Clip the actor's (with the action std) and the critic's gradient norms separately, as rsl_rl does, so
    that large value-loss gradients do not shrink the policy's step."""
    normalize_advantage_per_minibatch: bool = False
    """Normalize advantages per minibatch instead of once over the whole rollout."""
    normalize_rewards: bool = False
    """Scale rewards by the running std of the discounted return (VecNormalize style) for learning only."""
    adam_eps: float = 1e-5
    """Adam epsilon."""
    compile: bool = False
    """torch.compile the loss and its backward pass (same math; tens of seconds of compilation first)."""
    symmetry: Literal["none", "augment"] = "none"
    """none: off; augment: every minibatch is doubled with its left-right mirror (mirrored observations and
    actions, the same old log-probs, values, advantages and returns), as rsl_rl's symmetry augmentation. Needs a
    task whose env offers a mirror (rl_core.env_api.Symmetric; of its critic observations too, when it has a
    separate critic group) and a memoryless policy (the CUDA-graph update graphs it too)."""
    cuda_graph: bool = True
    """On a CUDA device (single process): after the first iteration, replay each minibatch update as one CUDA
    graph (same math; removes the kernel-launch overhead that bounds small networks). No effect on the CPU (nor
    with amp, whose discriminator step runs eagerly)."""
    amp: AmpConfig = field(default_factory=AmpConfig)
    """Adversarial motion priors (name: amp only)."""

    def __post_init__(self) -> None:
        check_types(self, "algorithm.")
        require(self.num_learning_epochs >= 1, "algorithm.num_learning_epochs", self.num_learning_epochs,
                "an integer >= 1")
        require(self.num_mini_batches >= 1, "algorithm.num_mini_batches", self.num_mini_batches, "an integer >= 1")
        require(self.clip_param > 0, "algorithm.clip_param", self.clip_param, "a number > 0")
        require(0 < self.gamma <= 1, "algorithm.gamma", self.gamma, "a number in (0, 1]")
        require(0 <= self.lam <= 1, "algorithm.lam", self.lam, "a number in [0, 1]")
        require(self.value_loss_coef >= 0, "algorithm.value_loss_coef", self.value_loss_coef, "a number >= 0")
        require(self.entropy_coef >= 0, "algorithm.entropy_coef", self.entropy_coef, "a number >= 0")
        require(0 < self.learning_rate < 1, "algorithm.learning_rate", self.learning_rate, "a number in (0, 1)")
        require(self.desired_kl > 0, "algorithm.desired_kl", self.desired_kl, "a number > 0")
        require(self.target_kl is None or self.target_kl > 0, "algorithm.target_kl", self.target_kl,
                "null or a number > 0")
        require(self.max_grad_norm > 0, "algorithm.max_grad_norm", self.max_grad_norm, "a number > 0")
        require(self.adam_eps > 0, "algorithm.adam_eps", self.adam_eps, "a number > 0")
        require(self.teacher is None or self.teacher.strip() != "", "algorithm.teacher", self.teacher,
                "null or a checkpoint file / run folder")
        require(self.teacher_obs.strip() != "", "algorithm.teacher_obs", self.teacher_obs,
                "the name of an observation group, e.g. critic")
        if self.name == "distillation":
            # The PPO-only mechanisms that would silently do something else (or nothing) are refused.
            require(self.schedule != "adaptive", "algorithm.schedule", self.schedule,
                    "'fixed' or 'linear' with algorithm.name=distillation (adaptive follows PPO's KL)")
            require(self.symmetry == "none", "algorithm.symmetry", self.symmetry,
                    "'none' with algorithm.name=distillation")
            require(self.target_kl is None, "algorithm.target_kl", self.target_kl,
                    "null with algorithm.name=distillation (it stops PPO epochs on PPO's KL)")
            require(not self.compile, "algorithm.compile", self.compile,
                    "false with algorithm.name=distillation (its update runs eagerly)")


@dataclass(frozen=True)
class RunnerConfig:
    """The training loop: rollout length, run length, seeding, device, checkpoints."""

    num_steps_per_env: int = 24
    """Control steps each env contributes to one rollout (rollout length T)."""
    max_iterations: int = 100
    """Number of iterations (rollout + update) of the run; see max_env_steps."""
    max_env_steps: Optional[int] = None
    """If set, the run length in env steps instead (iterations = ceil(steps / (num_envs * T)))."""
    seed: int = 1
    """Seed of torch, the environments and the minibatch shuffling."""
    device: str = "cpu"
    """Policy device: 'cpu', 'cuda' or 'cuda:N'."""
    save_interval: int = 50
    """Write a checkpoint every this many iterations (and always at the end)."""
    stop_grace_s: float = 5.0
    """After a stop signal (SIGTERM, SIGINT, SIGUSR1), the iteration in progress may run this long (s); then the
    last completed iteration's state, kept in memory, is written as the final checkpoint and the process ends
    (rl_core/stopping.py; single-process runs: under torchrun the ranks finish the iteration)."""
    torch_threads: int = 0
    """Torch intra-op threads (0: torch's default, i.e. all cores)."""
    log_window: int = 100
    """Episode statistics are means over the last this many finished episodes."""
    logger: Literal["tensorboard", "wandb", "both"] = "tensorboard"
    """Where scalars go besides the console: TensorBoard files in the run folder, a Weights & Biases run (in
    <run folder>/wandb; WANDB_MODE=offline works without an account, `wandb sync` uploads later), or both."""
    wandb_project: str = "legged-mjx"
    """W&B project of the run (logger wandb or both)."""
    divergence_limit: float = 0.01
    """Stop the run (one line naming the usual causes and the last good checkpoint, saved first if none was) when
    the share of invalid transitions (diverged physics; non-finite observations, rewards or values: reset and not
    learned from) averaged over the last divergence_window iterations exceeds this; 1 never stops."""
    divergence_window: int = 10
    """Iterations over which the diverged share is averaged for divergence_limit."""

    def __post_init__(self) -> None:
        check_types(self, "runner.")
        require(self.num_steps_per_env >= 1, "runner.num_steps_per_env", self.num_steps_per_env, "an integer >= 1")
        require(self.max_iterations >= 1, "runner.max_iterations", self.max_iterations, "an integer >= 1")
        require(self.max_env_steps is None or self.max_env_steps >= 1, "runner.max_env_steps", self.max_env_steps,
                "null or an integer >= 1")
        require(self.seed >= 0, "runner.seed", self.seed, "an integer >= 0")
        require(self.device in ("cpu", "cuda") or (self.device.startswith("cuda:") and self.device[5:].isdigit()),
                "runner.device", self.device, "'cpu', 'cuda' or 'cuda:N'")
        require(self.save_interval >= 1, "runner.save_interval", self.save_interval, "an integer >= 1")
        require(self.stop_grace_s >= 0, "runner.stop_grace_s", self.stop_grace_s, "a number >= 0")
        require(self.torch_threads >= 0, "runner.torch_threads", self.torch_threads, "an integer >= 0")
        require(self.log_window >= 1, "runner.log_window", self.log_window, "an integer >= 1")
        require(0 <= self.divergence_limit <= 1, "runner.divergence_limit", self.divergence_limit,
                "a share in [0, 1] (1: never stop)")
        require(self.divergence_window >= 1, "runner.divergence_window", self.divergence_window, "an integer >= 1")


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs; written to the run folder as config.yaml."""

    env: EnvConfig = field(default_factory=EnvConfig)
    """Environment settings (the concrete type depends on the task)."""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """Networks and action distribution."""
    algorithm: AlgorithmConfig = field(default_factory=AlgorithmConfig)
    """The learning algorithm (PPO or distillation) and its hyperparameters."""
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    """Training loop settings."""

    def __post_init__(self) -> None:
        check_types(self)
        batch = self.env.num_envs * self.runner.num_steps_per_env
        mbs = self.algorithm.num_mini_batches
        require(batch % mbs == 0, "algorithm.num_mini_batches", mbs,
                f"a divisor of env.num_envs * runner.num_steps_per_env = {batch}")
        require(batch // mbs >= 2, "algorithm.num_mini_batches", mbs,
                f"at most {batch // 2} so that each minibatch holds 2 or more samples")
        if self.policy.recurrent:
            require(self.env.num_envs % self.algorithm.num_mini_batches == 0, "algorithm.num_mini_batches",
                    self.algorithm.num_mini_batches, f"a divisor of env.num_envs = {self.env.num_envs} with "
                    f"policy.memory={self.policy.memory} (each minibatch is the trajectories of a group of envs)")

        if self.policy.recurrent:
            require(self.algorithm.symmetry == "none", "algorithm.symmetry", self.algorithm.symmetry,
                    f"'none' with policy.memory={self.policy.memory} (symmetry augmentation needs a memoryless policy)")

    @property
    def batch_size(self) -> int:
        """Samples per iteration."""
        return self.env.num_envs * self.runner.num_steps_per_env

    @property
    def total_iterations(self) -> int:
        """Iterations of the run (max_env_steps wins when set)."""
        if self.runner.max_env_steps is not None:
            return math.ceil(self.runner.max_env_steps / self.batch_size)
        return self.runner.max_iterations
