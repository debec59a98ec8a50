"""Deterministic evaluation of a policy (mean action / argmax, frozen normalizer) on a batched env.

Every env contributes the same number of episodes (its first ``ceil(episodes / num_envs)``), taken in round
order, so short episodes (falls) are not over-counted the way "the first K episodes to finish" would. Envs
may report per-step metrics in ``info["metrics"]`` (name -> ``[N]`` tensor); each is averaged over every
episode's steps, then over episodes. ``fall_rate`` is the fraction of episodes that ended by termination
rather than by the time limit. Recurrent policies carry their actor state across steps and start every episode
(per env) from the zero state. Envs that report ``info["breakdown"]`` and ``breakdown_edges`` (see
``contract.breakdown``) also get the metrics per command range, under ``by_command``. Values an env reports in
``info["episode_stats"]`` (name -> ``[N]``, the value of each episode that ends at that step, NaN elsewhere: a
locomotion task's ``success``) are kept with the episode that ended; each is averaged over the chosen episodes
that have a value (an episode whose value is NaN does not count for that name).

An episode in which a step was invalid (``info["invalid"]``: diverged physics, reset by the env) or gave a
non-finite reward diverged: it is counted apart (``diverged_episodes``) and enters none of the metrics (it is no
success and no fall); ``episodes`` counts the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from contract import breakdown
from rl_core.env_api import CommandBreakdown, VecEnv
from rl_core.modules.actor_critic import ActorCritic


@torch.inference_mode()
def evaluate(policy: ActorCritic, env: VecEnv, episodes: int, seed: int, max_steps: int = 1_000_000,
             on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run until every env has finished its share of ``episodes``; return the means over those episodes.

    ``on_step(t)`` is called after every env step (to record video or plots).
    """
    device = next(policy.parameters()).device
    N = env.num_envs
    quota = math.ceil(episodes / N)
    obs = env.reset(seed=seed)
    sums: dict[str, torch.Tensor] = {"return": torch.zeros(N, device=device)}
    ep_len = torch.zeros(N, device=device)
    finished = torch.zeros(N, dtype=torch.long, device=device)
    diverged = torch.zeros(N, dtype=torch.bool, device=device)  # the running episode had an invalid step
    records: list[tuple[int, int, dict[str, float] | None]] = []  # (round, env, values; None: diverged)
    bins = _BinnedMetrics(env.breakdown_edges if isinstance(env, CommandBreakdown) else {}, device)
    state = policy.init_actor_hidden(N, device) if policy.is_recurrent else None
    for t in range(max_steps):
        if state is not None:
            actions, state = policy.act_inference_step(obs["policy"].to(device), state)
        else:
            actions = policy.act_inference(obs["policy"].to(device))
        obs, rew, term, trunc, info = env.step(actions.squeeze(-1).long() if env.action_spec.discrete else actions)
        if on_step is not None:
            on_step(t)
        rew = rew.to(device)
        diverged |= ~torch.isfinite(rew)
        if "invalid" in info:
            diverged |= info["invalid"].to(device)
        sums["return"] += rew
        for name, value in info.get("metrics", {}).items():
            sums.setdefault(name, torch.zeros(N, device=device))
            sums[name] += value.to(device)
        ep_len += 1
        bins.add(dict(info), finished < quota)
        term, done = term.to(device), (term | trunc).to(device)
        if state is not None:  # the next observation of a finished env starts a new episode
            state.masked_fill_(done.view(1, 1, -1, 1), 0.0)
        if bool(done.any()):  # evaluation is not the training hot loop: a sync per step is fine here
            stats = {_STAT + k: v.reshape(-1).tolist() for k, v in info.get("episode_stats", {}).items()}
            for i in done.nonzero().flatten().tolist():
                if finished[i] < quota and bool(diverged[i]):
                    records.append((int(finished[i]), i, None))
                elif finished[i] < quota:
                    values = {k: (v[i] if k == "return" else v[i] / ep_len[i]).item() for k, v in sums.items()}
                    values.update(length=ep_len[i].item(), fell=float(term[i]))
                    values.update({k: v[i] for k, v in stats.items() if not math.isnan(v[i])})
                    records.append((int(finished[i]), i, values))
            finished += done
            for v in sums.values():
                v.masked_fill_(done, 0.0)
            ep_len.masked_fill_(done, 0.0)
            diverged.masked_fill_(done, False)
            if bool((finished >= quota).all()):
                break
    records.sort(key=lambda r: (r[0], r[1]))
    picked = [r[2] for r in records[:episodes]]
    chosen = [r for r in picked if r is not None]
    n = max(1, len(chosen))
    out: dict[str, Any] = {"episodes": len(chosen), "diverged_episodes": len(picked) - len(chosen),
           "mean_episode_return": sum(r["return"] for r in chosen) / n,
           "mean_episode_length": sum(r["length"] for r in chosen) / n,
           "fall_rate": sum(r["fell"] for r in chosen) / n}
    for name in sums:
        if name != "return":
            out[name] = sum(r[name] for r in chosen) / n
    for name in dict.fromkeys(k for r in chosen for k in r if k.startswith(_STAT)):
        have = [r[name] for r in chosen if name in r]
        out[name.removeprefix(_STAT)] = sum(have) / len(have)
    if bins.edges:
        out["by_command"] = bins.result()
    return out


_STAT = "episode_stats/"
"""Prefix of an episode record's ``info["episode_stats"]`` values (kept apart from the per-step metrics)."""


class _BinnedMetrics:
    """Sums of every per-step metric within each bin of each ``info["breakdown"]`` value, on device."""

    def __init__(self, edges: dict[str, list[float]], device: torch.device):
        self.edges = edges
        self.inner = {k: torch.tensor(e[1:-1], device=device) for k, e in edges.items()}
        self.counts = {k: torch.zeros(len(e) - 1, device=device) for k, e in edges.items()}
        self.sums: dict[str, dict[str, torch.Tensor]] = {k: {} for k in edges}

    def add(self, info: dict[str, Any], active: torch.Tensor) -> None:
        if not self.edges:
            return
        w = active.float()
        for key, values in info["breakdown"].items():
            idx = torch.bucketize(values.to(w.device).contiguous(), self.inner[key], right=True)
            self.counts[key].index_add_(0, idx, w)
            for name, metric in info.get("metrics", {}).items():
                s = self.sums[key].setdefault(name, torch.zeros_like(self.counts[key]))
                s.index_add_(0, idx, metric.to(w.device) * w)

    def result(self) -> dict[str, list[dict[str, float | None]]]:
        return {key: breakdown.rows(self.edges[key], self.counts[key].tolist(),
                                    {name: s.tolist() for name, s in self.sums[key].items()})
                for key in self.edges}
