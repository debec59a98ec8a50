"""An exported Gymnasium policy in a plain Gymnasium loop: one env, onnxruntime, numpy (no torch)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from contract.families import Family, Key
from deploy.onnx_policy import OnnxPolicy
from envs import atari_wrappers

RUNTIME = "plain Gymnasium"
"""Where ``run`` plays a file (``apps/sim2sim.py`` names it)."""
FAMILY = Family(
    "gym", "a Gymnasium or Atari policy",
    keys=(
        Key("env_id", "str", "", "Gymnasium id"),
        Key("action_offset", "int", "", "added to a discrete action index"),
        Key("clip_actions", "bool", "", "clip continuous actions to the bounds"),
        Key("max_episode_steps", "int|null", "", "episode step limit"),
        Key("obs_mask", "list[int]", "", "observation entries training dropped"),
        Key("action_low", "list[number]", "", "continuous action bounds", optional="continuous actions"),
        Key("action_high", "list[number]", "", "continuous action bounds", optional="continuous actions"),
        Key("atari", "object", "", "ALE preprocessing: frame_skip, screen_size, noop_max, frame_stack, "
            "fire_on_life_start", optional="Atari games"),
    ),
    carries=(
        "obs_layout ",
    ),
)
"""This module plays the family's exported files (``contract/families.py`` reads the declaration)."""


def run(policy: OnnxPolicy, episodes: int, seed: int) -> dict[str, Any]:
    """Episode ``k`` is reset with seed ``seed + k``; returns play.py's generic metrics."""
    meta = policy.metadata
    kwargs = {"max_episode_steps": meta["max_episode_steps"]} if meta.get("max_episode_steps") else {}
    atari = meta.get("atari")
    if atari is not None:  # the same per-game preprocessing as in training; whole games, raw score
        atari_wrappers.register_ale()
        env = gym.make(meta["env_id"], **kwargs, **atari_wrappers.make_kwargs(meta["env_id"]))
        env = atari_wrappers.wrapper(atari["frame_skip"], atari["screen_size"], atari["noop_max"],
                                     atari["frame_stack"], atari["fire_on_life_start"])(env)
    else:
        env = gym.make(meta["env_id"], **kwargs)
        if len(env.observation_space.shape or ()) != 1:
            env = gym.wrappers.FlattenObservation(env)
    keep = _kept_entries(meta, env)
    returns, lengths, falls = [], [], []
    try:
        for k in range(episodes):
            obs, _ = env.reset(seed=seed + k)
            policy.reset()  # a recurrent policy starts every episode from the zero state
            total, steps, term, trunc = 0.0, 0, False, False
            while not (term or trunc):
                action = policy((np.asarray(obs).reshape(-1)[keep] if keep is not None else obs)[None])[0]
                if meta["action_type"] == "discrete":
                    action = int(action) + meta["action_offset"]
                elif meta["clip_actions"]:
                    action = np.clip(action, meta["action_low"], meta["action_high"])
                obs, reward, term, trunc, _ = env.step(action)
                total += float(reward)
                steps += 1
            returns.append(total)
            lengths.append(steps)
            falls.append(float(term))
    finally:
        env.close()
    return {"episodes": episodes, "mean_episode_return": float(np.mean(returns)),
            "mean_episode_length": float(np.mean(lengths)), "fall_rate": float(np.mean(falls))}


def _kept_entries(meta: dict[str, Any], env: Any) -> np.ndarray | None:
    """Indices of the observation entries the policy reads (training's ``env.obs_mask`` dropped the others)."""
    mask = meta.get("obs_mask") or []
    if not mask:
        return None
    full = int(np.prod(env.observation_space.shape))
    return np.array([i for i in range(full) if i not in set(mask)])
