"""Per-iteration logging: one console line, and TensorBoard scalars (flushed every iteration) and / or a
Weights & Biases run with the resolved config."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


class Logger:
    """Writes scalars to TensorBoard and / or W&B (``backend``) and a progress line to stdout."""

    def __init__(self, run_dir: Path, total_iterations: int, quiet: bool = False, backend: str = "tensorboard",
                 config: dict[str, Any] | None = None, project: str = "legged-mjx",
                 headline_metrics: tuple[tuple[str, str], ...] = ()):
        self.headline_metrics = headline_metrics
        """The env's headline metrics (``env_api.Headlined``) for the console line."""
        self.writer = None
        self.wandb_run = None
        self.run_dir = run_dir
        if backend in ("tensorboard", "both"):
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=str(run_dir))
        if backend in ("wandb", "both"):
            import wandb

            self.wandb_run = wandb.init(project=project, dir=str(run_dir), name=run_dir.name, config=config or {},
                                        id=_wandb_id(run_dir), resume="allow")
        self.total = total_iterations
        self.quiet = quiet

    def log(self, iteration: int, env_steps: int, scalars: dict[str, float], eta_s: float) -> None:
        if self.writer is not None:
            try:
                for name, value in scalars.items():
                    self.writer.add_scalar(name, value, env_steps)
                self.writer.flush()
            except OSError as e:  # a full disk or a run folder that became unwritable: training goes on
                self._drop_writer(e)
        if self.wandb_run is not None:
            self.wandb_run.log({**scalars, "iteration": iteration, "env_steps": env_steps}, step=env_steps)
        if self.quiet:
            return
        s = scalars
        ret = s.get("Episode/mean_return")
        length = s.get("Episode/mean_length")
        episode = f"ret {ret:9.2f} len {length:7.1f}" if ret is not None else "ret       n/a len     n/a"
        # The env's own per-episode values (e.g. Atari's game_score), after the learner's episode return.
        episode += "".join(f" {k.split('/', 1)[1]} {v:.2f}" for k, v in s.items()
                           if k.startswith("Episode/") and k not in _EPISODE_KEYS)
        episode += headline(s, self.headline_metrics)
        if "Train/diverged_share" in s:  # transitions reset and not learned from (runner.divergence_limit)
            episode += f" div {s['Train/diverged_share']:.2%}"
        line = (
            f"it {iteration:5d}/{self.total} | steps {env_steps:>10,d} | {s['Perf/samples_per_s']:9,.0f} sps "
            f"(collect {s['Perf/collection_time_s']:.2f}s learn {s['Perf/learning_time_s']:.2f}s) | {episode} | "
            f"{losses(s)} lr {s['Loss/learning_rate']:.2e} | eta {_fmt(eta_s)}"
        )
        print(line, flush=True, file=sys.stdout)

    def _drop_writer(self, e: OSError) -> None:
        print(f"warning: TensorBoard logging stopped: could not write to {self.run_dir}: {e.strerror or e}; "
              "training goes on (checkpoints are written separately)", file=sys.stderr, flush=True)
        self.writer = None

    def close(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError as e:
                self._drop_writer(e)
        if self.wandb_run is not None:
            self.wandb_run.finish()


def losses(scalars: dict[str, float]) -> str:
    """The algorithm's losses for the console line: PPO's value and surrogate losses, entropy and KL (with AMP the
    per-step task and style rewards and the discriminator's mean logits on reference / policy transitions), or the
    distillation loss."""
    s = scalars
    if "Loss/distillation" in s:
        return f"dloss {s['Loss/distillation']:.3g}"
    out = (f"vloss {s['Loss/value']:.3g} ploss {s['Loss/surrogate']:+.3g} ent {s['Policy/entropy']:.3f} "
           f"kl {s['Policy/kl']:.4f}")
    if "AMP/style_reward" in s:
        out += (f" | task {s['AMP/task_reward']:.4f} style {s['AMP/style_reward']:.3f} d {s['AMP/expert_d']:+.2f}"
                f"/{s['AMP/policy_d']:+.2f}")
    return out


def headline(scalars: dict[str, float], metrics: tuple[tuple[str, str], ...] = ()) -> str:
    """The task's headline metrics for the console line, from the env's logged means over the iteration: the
    metrics the env names (``env_api.Headlined``: (log name, short label)), and the iteration's fall rate (episode
    ends by termination over all episode ends: the ratio of the per-step terminated and truncated rates). Empty for
    envs that log none of them."""
    out = ""
    for key, short in metrics:
        if f"Env/{key}" in scalars:
            out += f" {short} {scalars[f'Env/{key}']:.3f}"
    term, trunc = scalars.get("Env/terminated"), scalars.get("Env/truncated")
    if term is not None and trunc is not None:
        out += f" fall {term / (term + trunc):.0%}" if term + trunc > 0 else " fall   n/a"
    return out


_EPISODE_KEYS = {"Episode/mean_return", "Episode/mean_length", "Episode/finished_this_iteration"}


def _wandb_id(run_dir: Path) -> str:
    """One W&B run per run folder, so a --resume continues the same run; the id is kept in the folder."""
    path = run_dir / "wandb_run_id.txt"
    if path.exists():
        return path.read_text().strip()
    import secrets

    run_id = secrets.token_hex(4)
    path.write_text(run_id + "\n")
    return run_id


def _fmt(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
