"""Deterministic evaluation of a policy (mean action / argmax, frozen normalizer) on a batched env."""

from __future__ import annotations

import torch

from rl_core.env_api import VecEnv
from rl_core.modules.actor_critic import ActorCritic


@torch.inference_mode()
def evaluate(policy: ActorCritic, env: VecEnv, episodes: int, seed: int, max_steps: int = 1_000_000) -> dict[str, float]:
    """Run until ``episodes`` episodes have finished (the first ones to finish count); return their means."""
    device = next(policy.parameters()).device
    obs = env.reset(seed=seed)
    ep_ret = torch.zeros(env.num_envs, device=device)
    ep_len = torch.zeros(env.num_envs, device=device)
    returns: list[float] = []
    lengths: list[float] = []
    for _ in range(max_steps):
        actions = policy.act_inference(obs["policy"].to(device))
        obs, rew, term, trunc, _ = env.step(actions.squeeze(-1).long() if env.action_spec.discrete else actions)
        ep_ret += rew.to(device)
        ep_len += 1
        done = (term | trunc).to(device)
        if bool(done.any()):  # evaluation is not the training hot loop: a sync per step is fine here
            returns += ep_ret[done].tolist()
            lengths += ep_len[done].tolist()
            ep_ret[done] = 0
            ep_len[done] = 0
            if len(returns) >= episodes:
                break
    returns, lengths = returns[:episodes], lengths[:episodes]
    n = max(1, len(returns))
    return {"episodes": len(returns), "mean_episode_return": sum(returns) / n, "mean_episode_length": sum(lengths) / n}
