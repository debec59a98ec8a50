"""Episode bookkeeping of a rollout: running returns and lengths, the env's log sums and per-episode statistics,
recorded on the device at every step and reduced once per iteration (no host sync per step).

An episode with an invalid transition (diverged physics, a non-finite value) is left out of every episode
statistic: it never counts as a success, and its return is not averaged.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import torch

from rl_core.env_api import StepInfo
from rl_core.stacked_sums import StackedSums


class EpisodeStats:
    """The episodes of ``N`` envs over rollouts of ``T`` steps; ``window``: how many finished episodes the means
    cover."""

    def __init__(self, T: int, N: int, window: int, device: torch.device):
        self.window, self.device = window, device
        self.ep_return = torch.zeros(N, device=device)
        self.ep_length = torch.zeros(N, device=device)
        self.recent_returns: deque[float] = deque(maxlen=window)
        self.recent_lengths: deque[float] = deque(maxlen=window)
        self._done = torch.zeros(T, N, dtype=torch.bool, device=device)
        self._returns = torch.zeros(T, N, device=device)
        self._lengths = torch.zeros(T, N, device=device)
        self._invalid = torch.zeros(N, dtype=torch.bool, device=device)
        """The running episode of each env had an invalid transition."""
        self._invalid_at = torch.zeros(T, N, dtype=torch.bool, device=device)
        self._stat_bufs: dict[str, torch.Tensor] = {}
        """The env's per-episode values (``info["episode_stats"]``), NaN where none ended: ``[T, N]`` per name."""
        self.recent_stats: dict[str, deque[float]] = {}
        self.log_sums = StackedSums()
        """The env's ``info["log"]`` summed over this rollout's steps (one stacked add per step)."""

    def start_rollout(self) -> None:
        self.log_sums = StackedSums()

    def record(self, t: int, rewards: torch.Tensor, done: torch.Tensor, invalid: torch.Tensor,
               info: StepInfo) -> None:
        """Step ``t``: finite ``rewards``, ``done`` (terminated or truncated) and ``invalid`` ``[N]``."""
        self.ep_return += rewards
        self.ep_length += 1
        self._invalid |= invalid
        self._done[t] = done
        self._returns[t] = self.ep_return
        self._lengths[t] = self.ep_length
        self._invalid_at[t] = self._invalid
        self.ep_return.masked_fill_(done, 0.0)
        self.ep_length.masked_fill_(done, 0.0)
        self._invalid.masked_fill_(done, False)
        self.log_sums.add(info.get("log", {}))
        for k, v in info.get("episode_stats", {}).items():
            v = v.to(self.device)
            self._stat_buffer(k)[t] = torch.where(self._invalid_at[t], math.nan, v)

    def log_means(self, steps: int) -> dict[str, torch.Tensor]:
        """The env's log of this rollout: each name's mean over its ``steps`` steps (on the device)."""
        return {k: v / steps for k, v in self.log_sums.totals().items()}

    def reduce(self) -> dict[str, float]:
        """The one host sync of an iteration: this rollout's finished episodes into the recent windows; the means
        (``Episode/...``)."""
        done = self._done & ~self._invalid_at
        finished = torch.stack([self._returns.T[done.T], self._lengths.T[done.T]]).cpu()  # in time order per env
        self.recent_returns.extend(finished[0].tolist())
        self.recent_lengths.extend(finished[1].tolist())
        out: dict[str, float] = {}
        if self.recent_returns:
            out["Episode/mean_return"] = mean(self.recent_returns)
            out["Episode/mean_length"] = mean(self.recent_lengths)
        out["Episode/finished_this_iteration"] = float(finished.shape[1])
        for name, buf in self._stat_bufs.items():
            self.recent_stats[name].extend(buf.T[~torch.isnan(buf.T)].cpu().tolist())
            buf.fill_(float("nan"))
            if self.recent_stats[name]:
                out[f"Episode/{name}"] = mean(self.recent_stats[name])
        return out

    def summary(self) -> dict[str, Any]:
        """summary.json's episode entries."""
        n = len(self.recent_returns)
        return {"mean_episode_return": mean(self.recent_returns) if n else None,
                "mean_episode_length": mean(self.recent_lengths) if n else None,
                "episodes_in_mean": n,
                **{f"mean_{name}": mean(v) for name, v in self.recent_stats.items() if v}}

    def _stat_buffer(self, name: str) -> torch.Tensor:
        buf = self._stat_bufs.get(name)
        if buf is None:
            with torch.inference_mode(False):  # first met inside a rollout; reset in place outside it
                buf = self._stat_bufs[name] = torch.full_like(self._returns, float("nan"))
            self.recent_stats[name] = deque(maxlen=self.window)
        return buf

    # -- checkpoint (the checkpoint's ``episode`` entry)
    def state_dict(self, running: bool) -> dict[str, Any]:
        """``running``: also the running episodes' sums (only where the env's state is saved too)."""
        return {"recent_returns": list(self.recent_returns), "recent_lengths": list(self.recent_lengths),
                "recent_stats": {k: list(v) for k, v in self.recent_stats.items()},
                "ep_return": self.ep_return.clone() if running else None,
                "ep_length": self.ep_length.clone() if running else None}

    def load_state_dict(self, state: dict[str, Any], running: bool) -> None:
        """``running``: the env's state was restored, so the running episodes continue (else they restart)."""
        self.recent_returns.clear()
        self.recent_returns.extend(state["recent_returns"])
        self.recent_lengths.clear()
        self.recent_lengths.extend(state["recent_lengths"])
        for name, values in state.get("recent_stats", {}).items():
            self._stat_buffer(name)
            self.recent_stats[name].clear()
            self.recent_stats[name].extend(values)
        if running:
            self.ep_return.copy_(state["ep_return"])
            self.ep_length.copy_(state["ep_length"])
        else:
            self.ep_return.zero_()
            self.ep_length.zero_()


def mean(values: Any) -> float:
    return sum(values) / len(values)
