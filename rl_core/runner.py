"""OnPolicyRunner: collect -> GAE -> PPO update (or distillation) -> log -> checkpoint, with exact save / resume."""

from __future__ import annotations

import json
import math
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, NamedTuple

import torch

from rl_core import checkpoint as ckpt
from rl_core import distributed
from rl_core.config import TrainConfig
from rl_core.config_io import to_dict
from rl_core.distillation import Distillation
from rl_core.env_api import Checkpointable, Obs, StepInfo, Symmetric, VecEnv, obs_dtype, state_dict_of
from rl_core.errors import CheckpointError, TrainingFault
from rl_core.logging import Logger
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.normalizer import ReturnNormalizer
from rl_core.modules.recurrent_steps import actor_step, hidden_shape, init_hidden, rollout_step, value_with_state
from rl_core.ppo import PPO
from rl_core.stacked_sums import StackedSums
from rl_core.stopping import StopRequest
from rl_core.storage import RolloutStorage
from rl_core.symmetry import Mirrors

_RESUME_SEED_STRIDE = 1_000_003
_RANK_SEED_STRIDE = 7_919


class _Acted(NamedTuple):
    """The policy's side of one rollout step (``OnPolicyRunner._act``)."""

    obs_n: torch.Tensor
    critic_n: torch.Tensor
    params: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    next_hidden: torch.Tensor | None
    labels: torch.Tensor | None
    """Distillation: the teacher's actions for this step (None for PPO)."""


class OnPolicyRunner:
    """Trains ``env`` with PPO (or distills a teacher into the policy, ``algorithm.name``) as configured by ``cfg``;
    writes TensorBoard, checkpoints and summary.json to ``run_dir``."""

    def __init__(self, env: VecEnv, cfg: TrainConfig, task: str, run_dir: str | Path | None = None, quiet: bool = False,
                 teacher: dict[str, Any] | None = None):
        """``teacher`` (distillation): a teacher record (``rl_core.distillation.load_teacher``, or the one in the
        checkpoint being resumed); None: loaded from ``cfg.algorithm.teacher``."""
        self.env, self.cfg, self.task, self.quiet = env, cfg, task, quiet
        self.distill = cfg.algorithm.distillation
        # Only rank 0 writes (logs, checkpoints, summary) under torchrun.
        self.run_dir = Path(run_dir) if run_dir is not None and distributed.is_main() else None
        rc = cfg.runner
        if rc.torch_threads:
            torch.set_num_threads(rc.torch_threads)
        self.device = torch.device(rc.device)
        torch.manual_seed(rc.seed)  # the same initial policy on every rank
        # Under torchrun each rank samples its own actions and its envs start from their own seeds.
        self.rank_seed = rc.seed + _RANK_SEED_STRIDE * distributed.rank()
        self.generator = torch.Generator(self.device).manual_seed(self.rank_seed)

        self.policy = ActorCritic.for_env(env, cfg.policy).to(self.device)
        self.total_iterations = cfg.total_iterations
        self.alg: PPO | Distillation
        if self.distill:
            self.alg = Distillation(self.policy, cfg.algorithm, self.total_iterations, self.device, env.obs_dims,
                                    env.action_spec, teacher)
        else:
            mirrors = Mirrors(env.mirror_obs, env.mirror_actions) if isinstance(env, Symmetric) else None
            self.alg = PPO(self.policy, cfg.algorithm, self.total_iterations, self.device, mirrors)
        head = self.policy.head
        # Distillation stores no critic observations (no critic is trained) but the teacher's actions.
        critic_shape = self.policy.critic_obs_shape if self.policy.asymmetric and not self.distill else None
        self.storage = RolloutStorage(rc.num_steps_per_env, env.num_envs, self.policy.obs_shape, critic_shape,
                                      head.action_dim, head.param_dim, self.device, obs_dtype(env),
                                      hidden_shape(self.policy, env.num_envs),
                                      teacher_action_dim=head.action_dim if self.distill else 0)
        self.reward_normalizer = (ReturnNormalizer(env.num_envs, cfg.algorithm.gamma, self.device)
                                  if cfg.algorithm.normalize_rewards and not self.distill else None)

        self.iteration = 0
        self.env_steps = 0
        self.wall_time_s = 0.0
        self.obs: Obs | None = None
        self.hidden: torch.Tensor | None = init_hidden(self.policy, env.num_envs, self.device)
        """Recurrent policies: the actor-critic state before the next step, ``[K, L, N, H]`` (None otherwise)."""
        self._reset_seed = self.rank_seed
        N = env.num_envs
        self.ep_return = torch.zeros(N, device=self.device)
        self.ep_length = torch.zeros(N, device=self.device)
        self.recent_returns: deque[float] = deque(maxlen=rc.log_window)
        self.recent_lengths: deque[float] = deque(maxlen=rc.log_window)
        # Per-step episode bookkeeping of one rollout, reduced once per iteration (no host sync per step).
        T = rc.num_steps_per_env
        self._done_buf = torch.zeros(T, N, dtype=torch.bool, device=self.device)
        self._ret_buf = torch.zeros(T, N, device=self.device)
        self._len_buf = torch.zeros(T, N, device=self.device)
        self._invalid_count = torch.zeros((), device=self.device)
        # Last line of defence against a broken env (any env, Gym tasks too): a transition with a non-finite
        # observation, reward or value is not learned from (weight 0) and its episode is left out of the logged
        # episode statistics. ``_obs_bad``: the observation the next step starts from was not finite.
        self._obs_bad = torch.zeros(N, dtype=torch.bool, device=self.device)
        self._ep_invalid = torch.zeros(N, dtype=torch.bool, device=self.device)
        self._ep_invalid_buf = torch.zeros(T, N, dtype=torch.bool, device=self.device)
        self.recent_diverged: deque[float] = deque(maxlen=rc.divergence_window)
        """The share of invalid transitions of each of the last iterations (``runner.divergence_limit``)."""
        self._zeros = torch.zeros(N, device=self.device)  # distillation stores no log-probabilities or values
        # The env's own per-episode values (info["episode_stats"]), NaN where none ended: [T, N] per name.
        self._stat_bufs: dict[str, torch.Tensor] = {}
        self.recent_stats: dict[str, deque[float]] = {}
        self.last_checkpoint: Path | None = None
        self.stopped_by = 0
        """The number of the signal that ended the last ``learn`` early (0: it ran to its end)."""

    # ------------------------------------------------------------------------------------ rollout
    def _to_device(self, obs: Obs) -> Obs:
        return {k: v.to(self.device, non_blocking=True) for k, v in obs.items()}

    @staticmethod
    def _finite_obs(obs: Obs) -> tuple[Obs, torch.Tensor]:
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
        return out, ~finite if finite is not None else torch.zeros(first.shape[0], dtype=torch.bool,
                                                                   device=first.device)

    def _act(self, obs: Obs, hidden: torch.Tensor | None) -> _Acted:
        """The policy's step on ``obs`` (normalizers updated first). Recurrent: ``hidden`` is the state before this
        step, ``next_hidden`` the state after it. Distillation (DAgger): the student acts (actor only), the teacher
        labels the same step, and no log-probabilities or values are computed."""
        policy, head = self.policy, self.policy.head
        pol_obs = obs["policy"]
        if isinstance(self.alg, Distillation):
            policy.update_normalizers(pol_obs, None)
            obs_n = policy.obs_normalizer(pol_obs)
            params, next_hidden = actor_step(policy, obs_n, hidden)
            actions = head.sample(params, self.generator)
            labels = self.alg.label(obs[self.cfg.algorithm.teacher_obs])
            return _Acted(obs_n, obs_n, params, actions, self._zeros, self._zeros, next_hidden, labels)
        critic_obs = obs.get("critic")
        policy.update_normalizers(pol_obs, critic_obs)
        obs_n = policy.obs_normalizer(pol_obs)
        critic_n = policy.critic_obs_normalizer(critic_obs) if policy.asymmetric else obs_n
        params, values, next_hidden = rollout_step(policy, obs_n, critic_n, hidden)
        actions = head.sample(params, self.generator)
        return _Acted(obs_n, critic_n, params, actions, head.log_prob(params, actions), values, next_hidden, None)

    def _final_values(self, info: StepInfo, truncated: torch.Tensor, next_hidden: torch.Tensor | None
                      ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """V(final observation) of the envs that ended this step (0 where it or its value is not finite), and
        ``[N]`` bool: a truncated env whose bootstrap value is not finite (``(None, None)`` without final
        observations, or in distillation). With memory the final observation continues the finished episode, so it
        is read in the state after this step (before the reset)."""
        final_obs = info.get("final_obs")
        if final_obs is None or self.distill:
            return None, None
        policy = self.policy
        final_obs = self._to_device(final_obs)
        final_critic = final_obs["critic"] if policy.asymmetric else final_obs["policy"]
        finite_final, final_bad = self._finite_obs({"c": final_critic})
        final_values = value_with_state(policy, policy.critic_obs_normalizer(finite_final["c"]), next_hidden)
        final_bad = (final_bad | ~torch.isfinite(final_values)) & truncated
        return torch.where(final_bad, 0.0, final_values), final_bad

    def _track_episodes(self, t: int, rewards: torch.Tensor, done: torch.Tensor, invalid: torch.Tensor,
                        info: StepInfo, log_sums: StackedSums) -> None:
        """Step ``t``'s episode bookkeeping on the device: running returns and lengths, the buffers reduced once per
        iteration, the env's log sums and per-episode statistics (none for an episode with an invalid step)."""
        self.ep_return += rewards
        self.ep_length += 1
        self._ep_invalid |= invalid
        self._done_buf[t] = done
        self._ret_buf[t] = self.ep_return
        self._len_buf[t] = self.ep_length
        self._ep_invalid_buf[t] = self._ep_invalid
        self.ep_return.masked_fill_(done, 0.0)
        self.ep_length.masked_fill_(done, 0.0)
        self._ep_invalid.masked_fill_(done, False)
        log_sums.add(info.get("log", {}))
        for k, v in info.get("episode_stats", {}).items():
            v = v.to(self.device)
            self._episode_stat_buffer(k)[t] = torch.where(self._ep_invalid_buf[t], math.nan, v)

    @torch.inference_mode()
    def collect(self) -> dict[str, torch.Tensor]:
        """Fill the storage with ``T`` steps of every env and compute advantages (distillation: the teacher's labels
        instead, no values). Returns env log sums."""
        storage, head = self.storage, self.policy.head
        discrete = self.env.action_spec.discrete
        obs, hidden = self.obs, self.hidden
        assert obs is not None
        log_sums = StackedSums()
        storage.clear()
        self._invalid_count.zero_()
        for t in range(storage.T):
            a = self._act(obs, hidden)
            next_obs, rewards, terminated, truncated, info = self.env.step(
                a.actions.squeeze(-1).long() if discrete
                else head.env_action(a.actions))  # type: ignore[operator]  # Gaussian heads only
            next_obs, next_bad = self._finite_obs(self._to_device(next_obs))
            rewards, terminated, truncated = (x.to(self.device) for x in (rewards, terminated, truncated))
            # the transition is not learned from if it started or ended in a non-finite observation, or if its
            # reward, value or bootstrap value is not finite, or if the env says so (info["invalid"], e.g. diverged
            # physics: reset by the env). Each finiteness test once; scalar fills (no zeros tensor per step).
            finite_rewards, finite_values = torch.isfinite(rewards), torch.isfinite(a.values)
            bad = next_bad | self._obs_bad | ~(finite_rewards & finite_values)
            rewards = torch.where(finite_rewards, rewards, 0.0)
            values = torch.where(finite_values, a.values, 0.0)
            final_values, final_bad = self._final_values(info, truncated, a.next_hidden)
            if final_bad is not None:
                bad = bad | final_bad
            env_invalid = info.get("invalid")
            invalid = bad if env_invalid is None else bad | env_invalid.to(self.device)
            self._obs_bad = next_bad
            done = terminated | truncated
            self._track_episodes(t, rewards, done, invalid, info, log_sums)
            learn_rewards = self.reward_normalizer(rewards, done) if self.reward_normalizer is not None else rewards
            storage.add(a.obs_n, a.critic_n if self.policy.asymmetric else None, a.actions, a.log_probs, a.params,
                        values, learn_rewards, terminated, truncated, final_values, invalid, hidden, a.labels)
            if a.next_hidden is not None:  # a new episode starts from the zero state (no host sync)
                hidden = a.next_hidden.masked_fill_((done | invalid).view(1, 1, -1, 1), 0.0)
            obs = next_obs
        if not self.distill:
            self._compute_returns(obs, hidden)
        self._invalid_count = (storage.weights == 0).sum().float()  # with the value targets GAE refused
        self.obs, self.hidden = obs, hidden
        return {k: v / storage.T for k, v in log_sums.totals().items()}

    def _compute_returns(self, obs: Obs, hidden: torch.Tensor | None) -> None:
        """GAE over the stored rollout, bootstrapped from V(``obs``) after its last step (NaN where ``obs`` was not
        finite: the storage then refuses that value target)."""
        policy = self.policy
        critic_last = obs["critic"] if policy.asymmetric else obs["policy"]
        last_values = value_with_state(policy, policy.critic_obs_normalizer(critic_last), hidden)
        last_values = torch.where(self._obs_bad, torch.full_like(last_values, math.nan), last_values)
        self.storage.compute_returns(last_values, self.cfg.algorithm.gamma, self.cfg.algorithm.lam)

    def _episode_stat_buffer(self, name: str) -> torch.Tensor:
        buf = self._stat_bufs.get(name)
        if buf is None:
            with torch.inference_mode(False):  # first met inside collect(); reset in place outside it
                buf = self._stat_bufs[name] = torch.full_like(self._ret_buf, float("nan"))
            self.recent_stats[name] = deque(maxlen=self.cfg.runner.log_window)
        return buf

    # --------------------------------------------------------------------------------------- learn
    def learn(self, num_iterations: int | None = None, stop: StopRequest | None = None) -> dict[str, Any]:
        """Run until ``total_iterations`` (or ``num_iterations`` more); save, log and write summary.json.

        ``stop`` (train.py's signal handlers): read before each iteration (under torchrun the ranks agree on it, one
        all-reduce per iteration); once set, the loop ends, a final checkpoint of the last finished iteration is
        written (unless it was just saved) and ``stopped_by`` holds the signal's number."""
        end = (self.total_iterations if num_iterations is None
               else min(self.total_iterations, self.iteration + num_iterations))
        self.stopped_by = 0
        saved_at = self.iteration  # nothing new to save before the first iteration of this call
        if self.obs is None:
            self.obs, self._obs_bad = self._finite_obs(self._to_device(self.env.reset(seed=self._reset_seed)))
            self.hidden = init_hidden(self.policy, self.env.num_envs, self.device)
        rc = self.cfg.runner
        logger = (Logger(self.run_dir, self.total_iterations, self.quiet, rc.logger, to_dict(self.cfg),
                         rc.wandb_project) if self.run_dir is not None else None)
        batch = self.cfg.batch_size * distributed.world_size()  # samples of all ranks
        save_interval = self.cfg.runner.save_interval
        try:
            while self.iteration < end:
                if stop is not None:
                    self.stopped_by = distributed.agree_on_stop(stop.signum, self.device)
                    if self.stopped_by:
                        break
                t0 = time.perf_counter()
                self.alg.set_iteration(self.iteration)
                env_log = self.collect()
                t1 = time.perf_counter()
                explained_var = None if self.distill else self._explained_variance()
                with torch.no_grad():  # a logged value: no autograd graph may outlive it (CUDA-graph capture)
                    mean_std = self.policy.head.mean_std()
                losses = self.alg.update(self.storage, self.generator)
                t2 = time.perf_counter()
                self.iteration += 1
                self.env_steps += batch
                self.wall_time_s += t2 - t0
                scalars = self._reduce(env_log, losses, explained_var, mean_std)  # the one host sync per iteration
                scalars.update({
                    "Perf/samples_per_s": batch / (t2 - t0),
                    "Perf/collection_samples_per_s": batch / (t1 - t0),
                    "Perf/collection_time_s": t1 - t0,
                    "Perf/learning_time_s": t2 - t1,
                })
                if logger is not None:
                    eta = (t2 - t0) * (end - self.iteration)
                    logger.log(self.iteration, self.env_steps, scalars, eta)
                self._check_learner(scalars)
                self._check_divergence(scalars["Train/diverged_share"])
                if self.run_dir is not None and (self.iteration % save_interval == 0 or self.iteration == end):
                    self.save(self.run_dir / "checkpoints" / f"model_{self.iteration}.pt")
                    saved_at = self.iteration
            if self.stopped_by and self.run_dir is not None and saved_at != self.iteration:
                self.save(self.run_dir / "checkpoints" / f"model_{self.iteration}.pt")  # the final checkpoint
        finally:
            if logger is not None:
                logger.close()
            if self.run_dir is not None:
                self.write_summary()
        return self.summary()

    def _check_learner(self, scalars: dict[str, float]) -> None:
        """Stop (without saving) if an update met a non-finite loss / gradient or left non-finite parameters."""
        bad_updates = int(scalars["Train/nonfinite_updates"])
        if bad_updates == 0 and scalars["Train/parameters_finite"] == 1.0:
            return
        what = (f"non-finite loss or gradient in {bad_updates} of {int(scalars['Loss/minibatch_updates'])} minibatch "
                "updates (their optimizer steps were skipped)" if bad_updates else "non-finite policy parameters")
        raise TrainingFault(f"training stopped at iteration {self.iteration}: {what}; nothing was saved after it; "
                            f"last good checkpoint: {self.last_checkpoint or 'none saved yet'}")

    def _check_divergence(self, share: float) -> None:
        """Stop when the diverged share, averaged over the last ``runner.divergence_window`` iterations, exceeds
        ``runner.divergence_limit``; a checkpoint is saved first if none was (nothing learned so far is lost)."""
        rc = self.cfg.runner
        self.recent_diverged.append(share)
        window = self.recent_diverged
        if rc.divergence_limit >= 1.0 or len(window) < window.maxlen:  # type: ignore[operator]
            return
        mean = sum(window) / len(window)
        if mean <= rc.divergence_limit:
            return
        if self.last_checkpoint is None and self.run_dir is not None:
            self.save(self.run_dir / "checkpoints" / f"model_{self.iteration}.pt")
        raise TrainingFault(
            f"training stopped at iteration {self.iteration}: {mean:.2%} of transitions diverged over the last "
            f"{len(window)} iterations (runner.divergence_limit={rc.divergence_limit:g}); usual causes: too few "
            "solver iterations (env.solver_iterations / ls_iterations, the robot's SimOverrides), a timestep too "
            "large, no armature on light joints, gains too high for the timestep (docs/reliability.md); last good "
            f"checkpoint: {self.last_checkpoint or 'none saved yet'}")

    def _parameters_finite(self) -> torch.Tensor:
        """One device flag: every parameter and normalizer statistic is finite."""
        return torch.stack([torch.isfinite(t).all() for t in self.policy.state_dict().values()
                            if t.is_floating_point()]).all()

    def _explained_variance(self) -> torch.Tensor:
        returns, values = self.storage.returns, self.storage.values
        var = returns.var()
        return torch.where(var > 0, 1.0 - (returns - values).var() / var, torch.zeros_like(var))

    def _reduce(self, env_log: dict[str, torch.Tensor], losses: dict[str, torch.Tensor],
                explained_var: torch.Tensor | None, mean_std: torch.Tensor) -> dict[str, float]:
        done = self._done_buf & ~self._ep_invalid_buf  # an episode with an invalid transition is not counted
        # Finished episodes of this rollout, in time order: one transfer of a small tensor.
        finished = torch.stack([self._ret_buf.T[done.T], self._len_buf.T[done.T]]).cpu()
        self.recent_returns.extend(finished[0].tolist())
        self.recent_lengths.extend(finished[1].tolist())
        names = self.alg.LOG_NAMES  # each algorithm's own scalars
        keys = list(names) + ["Policy/mean_std", "Train/invalid_transitions", "Train/diverged_share",
                              "Train/nonfinite_updates", "Train/parameters_finite"]
        values = [losses[v].float().reshape(()) for v in names.values()] + [
            mean_std.reshape(()).to(self.device), self._invalid_count.float(),
            self._invalid_count.float() / self._done_buf.numel(),
            losses["nonfinite_updates"].float(), self._parameters_finite().float()]
        if explained_var is not None:  # PPO's critic
            keys.append("Policy/explained_variance")
            values.append(explained_var.reshape(()))
        keys += [f"Env/{k}" for k in env_log]
        values += [v.float().reshape(()) for v in env_log.values()]
        stacked = distributed.all_reduce_mean_(torch.stack([v.to(self.device) for v in values]))  # means over ranks
        out = dict(zip(keys, stacked.tolist(), strict=True))
        if self.recent_returns:
            out["Episode/mean_return"] = sum(self.recent_returns) / len(self.recent_returns)
            out["Episode/mean_length"] = sum(self.recent_lengths) / len(self.recent_lengths)
        out["Episode/finished_this_iteration"] = float(finished.shape[1])
        for name, buf in self._stat_bufs.items():
            ended = buf.T[~torch.isnan(buf.T)].cpu().tolist()  # in time order per env
            buf.fill_(float("nan"))
            self.recent_stats[name].extend(ended)
            if self.recent_stats[name]:
                out[f"Episode/{name}"] = sum(self.recent_stats[name]) / len(self.recent_stats[name])
        return out

    # ---------------------------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict[str, Any]:
        env_state = state_dict_of(self.env)
        return {
            "format_version": ckpt.FORMAT_VERSION,
            "task": self.task,
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "wall_time_s": self.wall_time_s,
            "config": to_dict(self.cfg),
            "obs_dims": dict(self.env.obs_dims),
            "action_spec": {"discrete": self.env.action_spec.discrete, "n": self.env.action_spec.n},
            "policy": self.policy.state_dict(),
            "algorithm": self.alg.state_dict(),
            "reward_normalizer": self.reward_normalizer.state_dict() if self.reward_normalizer is not None else None,
            "generator": self.generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            "episode": {
                "recent_returns": list(self.recent_returns),
                "recent_lengths": list(self.recent_lengths),
                "recent_stats": {k: list(v) for k, v in self.recent_stats.items()},
                # Running episode sums continue only where the env state is restored too.
                "ep_return": self.ep_return.clone() if env_state is not None else None,
                "ep_length": self.ep_length.clone() if env_state is not None else None,
            },
            "env": env_state,
            "obs": ({k: v.clone() for k, v in self.obs.items()} if (self.obs is not None and env_state is not None)
                    else None),
            # The recurrent state continues with the envs' episodes (restarted episodes start from zeros).
            "hidden": self.hidden.clone() if (self.hidden is not None and env_state is not None) else None,
        }

    def save(self, path: str | Path) -> Path:
        """Write a checkpoint atomically; refuses (TrainingFault) to write non-finite parameters."""
        if not bool(self._parameters_finite()):
            raise TrainingFault(f"training stopped at iteration {self.iteration}: non-finite policy parameters; "
                                f"{path} was not written; last good checkpoint: "
                                f"{self.last_checkpoint or 'none saved yet'}")
        try:
            self.last_checkpoint = ckpt.save_atomic(self.state_dict(), path)
        except CheckpointError as e:  # a full disk, a folder that became unwritable: say what is still safe
            raise TrainingFault(f"training stopped at iteration {self.iteration}: {e}; last good checkpoint: "
                                f"{self.last_checkpoint or 'none saved yet'}") from None
        return self.last_checkpoint

    def load_state_dict(self, data: dict[str, Any], source: str = "checkpoint") -> None:
        """Restore everything needed to continue exactly (policy, optimizer, lr, normalizers, RNG, counters, env)."""
        ckpt.check_compatible(data, self.task, self.env, source)
        saved = data.get("config", {}).get("algorithm", {}).get("name", "ppo")
        if saved != self.cfg.algorithm.name:
            raise CheckpointError(f"checkpoint error: {source} was trained with algorithm.name={saved}, this run has "
                                  f"algorithm.name={self.cfg.algorithm.name}; resume with the same algorithm")
        self.policy.load_state_dict(data["policy"])
        self.alg.load_state_dict(data["algorithm"])
        if self.reward_normalizer is not None and data.get("reward_normalizer") is not None:
            self.reward_normalizer.load_state_dict(data["reward_normalizer"])
        self.generator.set_state(data["generator"])
        torch.set_rng_state(data["torch_rng"])
        self.iteration = int(data["iteration"])
        self.env_steps = int(data["env_steps"])
        self.wall_time_s = float(data.get("wall_time_s", 0.0))
        ep = data["episode"]
        self.recent_returns.clear()
        self.recent_returns.extend(ep["recent_returns"])
        self.recent_lengths.clear()
        self.recent_lengths.extend(ep["recent_lengths"])
        for name, values in ep.get("recent_stats", {}).items():
            self._episode_stat_buffer(name)
            self.recent_stats[name].clear()
            self.recent_stats[name].extend(values)
        # Under torchrun the checkpoint holds rank 0's envs only: every rank restarts its episodes instead.
        if data.get("env") is not None and isinstance(self.env, Checkpointable) and not distributed.active():
            self.env.load_state_dict(data["env"])
            self.obs = self._to_device(data["obs"])
            if self.hidden is not None:
                saved = data.get("hidden")
                self.hidden = (saved.to(self.device).clone() if saved is not None
                               else init_hidden(self.policy, self.env.num_envs, self.device))
            self.ep_return.copy_(ep["ep_return"])
            self.ep_length.copy_(ep["ep_length"])
        else:
            # Envs without checkpointable state restart their episodes from a seed tied to the iteration,
            # so resuming twice from one checkpoint gives identical runs.
            self._reset_seed = self.rank_seed + _RESUME_SEED_STRIDE * self.iteration
            self.obs = None
            self.hidden = init_hidden(self.policy, self.env.num_envs, self.device)
            self.ep_return.zero_()
            self.ep_length.zero_()

    # ------------------------------------------------------------------------------------- summary
    def summary(self) -> dict[str, Any]:
        n = len(self.recent_returns)
        return {
            "task": self.task,
            "iterations": self.iteration,
            "env_steps": self.env_steps,
            "wall_time_s": round(self.wall_time_s, 3),
            "samples_per_s": round(self.env_steps / self.wall_time_s, 1) if self.wall_time_s > 0 else 0.0,
            "mean_episode_return": sum(self.recent_returns) / n if n else None,
            "mean_episode_length": sum(self.recent_lengths) / n if n else None,
            "episodes_in_mean": n,
            **{f"mean_{name}": sum(v) / len(v) for name, v in self.recent_stats.items() if v},
        }

    def write_summary(self) -> None:
        """summary.json (derived from the checkpoints and logs): a failed write is a warning, never the run's error."""
        assert self.run_dir is not None
        tmp = self.run_dir / ".summary.json.tmp"
        try:
            tmp.write_text(json.dumps(self.summary(), indent=2) + "\n")
            tmp.replace(self.run_dir / "summary.json")
        except OSError as e:
            tmp.unlink(missing_ok=True)
            print(f"warning: could not write {self.run_dir / 'summary.json'}: {ckpt.write_failure(e, self.run_dir)}",
                  file=sys.stderr, flush=True)
