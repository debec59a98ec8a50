"""OnPolicyRunner: collect -> update -> log -> checkpoint, with exact save / resume.

The loop reads like rsl_rl's: the algorithm (``algorithm.name``, ``rl_core/algorithms.py``) owns its rollout
(``rl_core/algorithm.py``: act, record, finish_rollout, update) and the episode bookkeeping is ``EpisodeStats``
(``rl_core/episodes.py``); the runner steps the env, logs, checks and checkpoints, and knows no algorithm by name.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import torch

from contract.errors import CheckpointError, TrainingFault
from rl_core import checkpoint as ckpt
from rl_core import distributed
from rl_core.algorithm import EnvStep, checked_obs
from rl_core.algorithms import algorithm_class
from rl_core.config import TrainConfig
from rl_core.config_io import to_dict
from rl_core.env_api import Checkpointable, Headlined, NativeThreads, Obs, VecEnv, state_dict_of
from rl_core.episodes import EpisodeStats
from rl_core.logging import Logger
from rl_core.modules.actor_critic import ActorCritic
from rl_core.stopping import StopRequest
from rl_core.threads import torch_threads

_RESUME_SEED_STRIDE = 1_000_003
_RANK_SEED_STRIDE = 7_919


class OnPolicyRunner:
    """Trains ``env`` with the algorithm ``cfg.algorithm.name`` as configured by ``cfg``; writes TensorBoard,
    checkpoints and summary.json to ``run_dir``."""

    def __init__(self, env: VecEnv, cfg: TrainConfig, task: str, run_dir: str | Path | None = None, quiet: bool = False,
                 prepared: dict[str, Any] | None = None):
        """``prepared``: what the algorithm read before the env was built (``Algorithm.prepare``, e.g.
        distillation's teacher record); None: it is read now."""
        self.env, self.cfg, self.task, self.quiet = env, cfg, task, quiet
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
        kind = algorithm_class(cfg.algorithm.name)
        if prepared is None:
            prepared = kind.prepare(cfg.algorithm, None, "")
        self.alg = kind.build(self.policy, cfg, env, self.generator, prepared)
        self.episodes = EpisodeStats(rc.num_steps_per_env, env.num_envs, rc.log_window, self.device)

        self.iteration = 0
        self.env_steps = 0
        self.wall_time_s = 0.0
        self.obs: Obs | None = None
        self._reset_seed = self.rank_seed
        self.rollout_log: dict[str, torch.Tensor] = {}
        self.recent_diverged: deque[float] = deque(maxlen=rc.divergence_window)
        """The share of invalid transitions of each of the last iterations (``runner.divergence_limit``)."""
        self.last_checkpoint: Path | None = None
        self.keep_last_state = False
        """Keep the last completed iteration's state in memory (``write_last_completed``): train.py sets it for a
        single-process run, whose stop signal is answered within ``runner.stop_grace_s`` (rl_core/stopping.py)."""
        self._last_state: dict[str, Any] | None = None
        self._saved_iteration = -1
        self._save_lock = threading.Lock()
        self.stopped_by = 0
        """The number of the signal that ended the last ``learn`` early (0: it ran to its end)."""

    @property
    def storage(self) -> Any:
        """The algorithm's rollout storage."""
        return self.alg.storage

    # ------------------------------------------------------------------------------------ rollout
    def start(self) -> None:
        """Reset every env (a fresh run, or a resume without the envs' state)."""
        self.obs, obs_bad = checked_obs(self.env, self.env.reset(seed=self._reset_seed), self.device)
        self.alg.restart(obs_bad)

    @torch.inference_mode()
    def collect(self) -> dict[str, torch.Tensor]:
        """``T`` steps of every env into the algorithm's storage, then ``finish_rollout`` (with the torch threads
        the env asks for: ``NativeThreads``). Returns the env's log means of the rollout."""
        alg, episodes, env = self.alg, self.episodes, self.env
        obs = self.obs
        assert obs is not None
        alg.start_rollout()
        episodes.start_rollout()
        T = alg.storage.T
        with torch_threads(env.rollout_torch_threads if isinstance(env, NativeThreads) else 0):
            for t in range(T):
                step = EnvStep.of(env, env.step(alg.act(obs)), self.device)
                invalid = alg.record(step)
                episodes.record(t, step.rewards, step.done, invalid, step.info)
                obs = step.obs
            self.rollout_log = alg.finish_rollout(obs)
        self.obs = obs
        return episodes.log_means(T)

    # --------------------------------------------------------------------------------------- learn
    def learn(self, num_iterations: int | None = None, stop: StopRequest | None = None) -> dict[str, Any]:
        """Run until ``total_iterations`` (or ``num_iterations`` more); save, log and write summary.json.

        ``stop`` (train.py's signal handlers): read before each iteration (under torchrun the ranks agree on it, one
        all-reduce per iteration); once set, the loop ends, a final checkpoint of the last finished iteration is
        written (unless it was just saved) and ``stopped_by`` holds the signal's number."""
        end = (self.total_iterations if num_iterations is None
               else min(self.total_iterations, self.iteration + num_iterations))
        self.stopped_by = 0
        saved_at = self._saved_iteration = self.iteration  # nothing new to save before this call's first iteration
        if self.obs is None:
            self.start()
        rc = self.cfg.runner
        named = self.env.headline_metrics if isinstance(self.env, Headlined) else ()
        logger = (Logger(self.run_dir, self.total_iterations, self.quiet, rc.logger, to_dict(self.cfg),
                         rc.wandb_project, named) if self.run_dir is not None else None)
        batch = self.cfg.batch_size * distributed.world_size()  # samples of all ranks
        save_interval = self.cfg.runner.save_interval
        self._remember_state()
        try:
            while self.iteration < end:
                if stop is not None:
                    self.stopped_by = distributed.agree_on_stop(stop.signum, self.device)
                    if self.stopped_by:
                        if not stop.settle():  # the stop timer is writing the checkpoint and ends the process
                            while True:
                                time.sleep(1.0)
                        break
                t0 = time.perf_counter()
                self.alg.set_iteration(self.iteration)
                env_log = self.collect()
                t1 = time.perf_counter()
                with torch.no_grad():  # a logged value: no autograd graph may outlive it (CUDA-graph capture)
                    mean_std = self.policy.head.mean_std()
                losses = self.alg.update()
                t2 = time.perf_counter()
                self.iteration += 1
                self.env_steps += batch
                self.wall_time_s += t2 - t0
                scalars = self.iteration_scalars(env_log, losses, mean_std)  # the one host sync per iteration
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
                self._remember_state()
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

    def iteration_scalars(self, env_log: dict[str, torch.Tensor], losses: dict[str, torch.Tensor],
                          mean_std: torch.Tensor) -> dict[str, float]:
        """Every scalar of the iteration, averaged over the ranks: the one host sync of an iteration."""
        names = self.alg.LOG_NAMES  # each algorithm's own scalars
        rollout = self.rollout_log
        invalid = rollout["invalid_transitions"]
        keys = list(names) + ["Policy/mean_std", "Train/invalid_transitions", "Train/diverged_share",
                              "Train/nonfinite_updates", "Train/parameters_finite"]
        values = [losses[v].float().reshape(()) for v in names.values()] + [
            mean_std.reshape(()).to(self.device), invalid, invalid / (self.alg.storage.T * self.env.num_envs),
            losses["nonfinite_updates"].float(), self._parameters_finite().float()]
        if "explained_variance" in rollout:  # PPO's critic
            keys.append("Policy/explained_variance")
            values.append(rollout["explained_variance"].reshape(()))
        keys += [f"Env/{k}" for k in env_log]
        values += [v.float().reshape(()) for v in env_log.values()]
        stacked = distributed.all_reduce_mean_(torch.stack([v.to(self.device) for v in values]))  # means over ranks
        out = dict(zip(keys, stacked.tolist(), strict=True))
        out.update(self.episodes.reduce())
        return out

    # ---------------------------------------------------------------------------------- checkpoint
    def state_dict(self, with_env: bool = True) -> dict[str, Any]:
        """Everything a resume needs; ``with_env=False`` leaves the envs' state out (a resume restarts their
        episodes, as from a Gymnasium env's checkpoint)."""
        env_state = state_dict_of(self.env) if with_env else None
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
            "reward_normalizer": (self.alg.reward_normalizer.state_dict() if self.alg.reward_normalizer is not None
                                  else None),
            "generator": self.generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            # Running episode sums continue only where the env state is restored too.
            "episode": self.episodes.state_dict(running=env_state is not None),
            "env": env_state,
            "obs": ({k: v.clone() for k, v in self.obs.items()} if (self.obs is not None and env_state is not None)
                    else None),
            # The recurrent state continues with the envs' episodes (restarted episodes start from zeros).
            "hidden": self.alg.hidden.clone() if (self.alg.hidden is not None and env_state is not None) else None,
        }

    def _remember_state(self) -> None:
        """The learner's state of the iteration just completed, copied (``keep_last_state``). The envs' state is
        left out: copying thousands of worlds every iteration would cost a share of the run (tens of ms on the
        CPU), for a checkpoint only a late stop signal writes; its resume restarts the episodes."""
        if self.keep_last_state and self.run_dir is not None:
            self._last_state = copy.deepcopy(self.state_dict(with_env=False))

    def write_last_completed(self) -> tuple[int, Path | None]:
        """From the stop timer's thread: the last completed iteration's state kept in memory written as a checkpoint
        (atomically; nothing when it is on disk already or none was kept); its iteration and the newest checkpoint.
        A save of the main thread in progress finishes first."""
        with self._save_lock:
            state = self._last_state
            if state is None or self.run_dir is None:
                return self.iteration, self.last_checkpoint
            if state["iteration"] != self._saved_iteration:
                path = self.run_dir / "checkpoints" / f"model_{state['iteration']}.pt"
                self.last_checkpoint = ckpt.save_atomic(state, path)
                self._saved_iteration = state["iteration"]
            return state["iteration"], self.last_checkpoint

    def save(self, path: str | Path) -> Path:
        """Write a checkpoint atomically; refuses (TrainingFault) to write non-finite parameters."""
        with self._save_lock:
            path = self._save(path)
            self._saved_iteration = self.iteration
            return path

    def _save(self, path: str | Path) -> Path:
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
        if self.alg.reward_normalizer is not None and data.get("reward_normalizer") is not None:
            self.alg.reward_normalizer.load_state_dict(data["reward_normalizer"])
        self.generator.set_state(data["generator"])
        torch.set_rng_state(data["torch_rng"])
        self.iteration = int(data["iteration"])
        self.env_steps = int(data["env_steps"])
        self.wall_time_s = float(data.get("wall_time_s", 0.0))
        # Under torchrun the checkpoint holds rank 0's envs only: every rank restarts its episodes instead.
        running = data.get("env") is not None and isinstance(self.env, Checkpointable) and not distributed.active()
        self.episodes.load_state_dict(data["episode"], running)
        self.alg.restart()
        if running:
            assert isinstance(self.env, Checkpointable)
            self.env.load_state_dict(data["env"])
            self.obs = {k: v.to(self.device, non_blocking=True) for k, v in data["obs"].items()}
            saved = data.get("hidden")
            if self.alg.hidden is not None and saved is not None:
                self.alg.hidden = saved.to(self.device).clone()
        else:
            # Envs without checkpointable state restart their episodes from a seed tied to the iteration,
            # so resuming twice from one checkpoint gives identical runs.
            self._reset_seed = self.rank_seed + _RESUME_SEED_STRIDE * self.iteration
            self.obs = None

    # ------------------------------------------------------------------------------------- summary
    def summary(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "iterations": self.iteration,
            "env_steps": self.env_steps,
            "wall_time_s": round(self.wall_time_s, 3),
            "samples_per_s": round(self.env_steps / self.wall_time_s, 1) if self.wall_time_s > 0 else 0.0,
            **self.episodes.summary(),
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
