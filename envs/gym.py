"""Gymnasium adapter: any Gymnasium id as a batched env satisfying ``rl_core.env_api.VecEnv``.

Uses Gymnasium 1.x's SAME_STEP autoreset: when an env's episode ends, ``step`` returns the first observation
of the next episode and the last observation of the finished one in ``info["final_obs"]``. So every stored
transition is a real one (nothing is learned across a reset), and a truncated episode is bootstrapped from the
value of its true final observation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Optional, cast

import gymnasium as gym
import numpy as np
import torch
from gymnasium.wrappers import FlattenObservation

from contract.errors import ConfigError, UserError
from rl_core.config import EnvConfig
from rl_core.config_io import require
from rl_core.env_api import ActionSpec, Obs, StepInfo


@dataclass(frozen=True)
class GymEnvConfig(EnvConfig):
    """A Gymnasium environment id, vectorized."""

    env_id: str = "CartPole-v1"
    """Gymnasium id, e.g. CartPole-v1, Pendulum-v1, BipedalWalker-v3, Ant-v5."""
    vectorization: Literal["sync", "async"] = "sync"
    """sync: all envs in this process (best for cheap envs); async: one subprocess per env."""
    max_episode_steps: Optional[int] = None
    """Override the id's time limit (null: keep the registered one)."""
    clip_actions: bool = True
    """Clip continuous actions to the action space bounds before stepping (the policy keeps the raw sample)."""
    render_mode: Optional[Literal["rgb_array"]] = None
    """null, or rgb_array to render frames (play.py --video sets it)."""
    obs_mask: tuple[int, ...] = ()
    """Indices into the (flattened) observation vector that are DROPPED, not zeroed: the policy sees the other
    entries in their order, and the observation width shrinks by len(obs_mask). E.g. [2] on Pendulum-v1 removes
    the angular velocity (a partially observed task that needs memory). Exported policies store it, and the
    Gymnasium deploy loop drops the same entries."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(bool(self.env_id), "env.env_id", self.env_id, "a Gymnasium id such as CartPole-v1")
        require(self.max_episode_steps is None or self.max_episode_steps >= 1, "env.max_episode_steps",
                self.max_episode_steps, "null or an integer >= 1")
        require(all(i >= 0 for i in self.obs_mask) and len(set(self.obs_mask)) == len(self.obs_mask), "env.obs_mask",
                list(self.obs_mask), "a list of distinct observation indices >= 0")


def _flatten_if_needed(env: gym.Env) -> gym.Env:
    space = env.observation_space
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return env
    return FlattenObservation(env)


class GymVecEnv:
    """Batched Gymnasium env on the CPU; tensors are handed to the runner as float32 / bool torch tensors.

    Subclasses (``envs.atari``) change the per-env wrappers, keep image observations as they are, and rewrite
    rewards and done flags in ``_post_step``.
    """

    obs_dtype = torch.float32
    """Element type of the observations handed to the runner."""

    def _wrappers(self) -> list[Callable[[gym.Env], gym.Env]]:
        """Wrappers applied to each sub-env (vector observations: flattened)."""
        return [_flatten_if_needed]

    def _make_kwargs(self) -> dict[str, Any]:
        """Extra arguments of ``gym.make`` for each sub-env."""
        return {}

    def __init__(self, cfg: GymEnvConfig, device: str | torch.device = "cpu"):
        self.cfg = cfg
        kwargs: dict[str, Any] = self._make_kwargs()
        if cfg.max_episode_steps is not None:
            kwargs["max_episode_steps"] = cfg.max_episode_steps
        if cfg.render_mode is not None:
            kwargs["render_mode"] = cfg.render_mode
        try:
            self.vec = gym.make_vec(
                cfg.env_id, num_envs=cfg.num_envs, vectorization_mode=cfg.vectorization,
                vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
                wrappers=self._wrappers(), **kwargs)  # type: ignore[arg-type]  # any Env -> Env callable works
        except gym.error.DependencyNotInstalled as e:
            raise UserError(f"task {cfg.env_id} needs an extra package: {str(e).splitlines()[0]}") from None
        self.num_envs = cfg.num_envs
        self.device = torch.device(device)
        obs_space = self.vec.single_observation_space
        act_space = self.vec.single_action_space
        full = int(np.prod(obs_space.shape or ()))
        self._keep: np.ndarray | None = None
        """Indices of the observation entries kept (None: all of them; see GymEnvConfig.obs_mask)."""
        if cfg.obs_mask:
            if len(obs_space.shape or ()) != 1 or self.obs_dtype != torch.float32:
                self.vec.close()
                raise ConfigError("env.obs_mask", list(cfg.obs_mask), f"[] for {cfg.env_id} (its observations are "
                                  f"not a vector)")
            if max(cfg.obs_mask) >= full or len(cfg.obs_mask) >= full:
                self.vec.close()
                raise ConfigError("env.obs_mask", list(cfg.obs_mask), f"distinct indices in 0..{full - 1} that "
                                  f"leave at least one of the {full} observation entries of {cfg.env_id}")
            self._keep = np.array([i for i in range(full) if i not in set(cfg.obs_mask)])
        self.obs_dims = {"policy": full if self._keep is None else len(self._keep)}
        self._obs_shape: tuple[int, ...] = (self.obs_dims["policy"],)
        if isinstance(act_space, gym.spaces.Discrete):
            self.action_spec = ActionSpec(discrete=True, n=int(act_space.n))
            self._low = self._high = None
        elif isinstance(act_space, gym.spaces.Box) and len(act_space.shape) == 1:
            self._low, self._high = act_space.low.astype(np.float32), act_space.high.astype(np.float32)
            self.action_spec = ActionSpec(discrete=False, n=int(act_space.shape[0]),
                                          low=tuple(float(x) for x in self._low),
                                          high=tuple(float(x) for x in self._high))
        else:
            raise UserError(f"task {cfg.env_id}: action space {act_space} is not supported (Discrete or 1-D Box only)")
        self._action_offset = int(getattr(act_space, "start", 0)) if self.action_spec.discrete else 0
        self.max_episode_steps = self.vec.spec.max_episode_steps if self.vec.spec is not None else None

    def _obs_array(self, x: Any) -> np.ndarray:
        np_dtype = np.uint8 if self.obs_dtype == torch.uint8 else np.float32
        if self._keep is not None:
            return np.array(x, dtype=np_dtype).reshape(-1, self._keep.size + len(self.cfg.obs_mask))[:, self._keep]
        return np.array(x, dtype=np_dtype, copy=True).reshape(-1, *self._obs_shape)

    def _obs(self, x: Any) -> Obs:
        return {"policy": torch.as_tensor(self._obs_array(x), device=self.device)}

    def _post_step(self, rew: np.ndarray, term: np.ndarray, trunc: np.ndarray, info: dict[str, Any]
                   ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Rewards and terminated flags as the learner sees them, and extra info entries (none here)."""
        return rew, term, {}

    def reset(self, seed: int | None = None) -> Obs:
        obs, _ = self.vec.reset(seed=seed)
        return self._obs(obs)

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        a = actions.detach().cpu().numpy()
        if self.action_spec.discrete:
            a = a.astype(np.int64) + self._action_offset
        elif self.cfg.clip_actions:
            a = np.clip(a, self._low, self._high)
        obs, rew, term, trunc, info = self.vec.step(a)
        term = np.asarray(term, dtype=bool)
        trunc = np.asarray(trunc, dtype=bool) & ~term
        rew, term, out_info = self._post_step(np.asarray(rew, dtype=np.float32), term, trunc, info)
        trunc = trunc & ~term
        out_info["final_obs"] = None
        if trunc.any():
            final = self._obs_array(obs)
            for i in np.flatnonzero(trunc):
                final[i] = self._obs_array(info["final_obs"][i])[0]
            out_info["final_obs"] = {"policy": torch.as_tensor(final, device=self.device)}
        return (self._obs(obs), torch.as_tensor(rew, device=self.device),
                torch.as_tensor(term, device=self.device), torch.as_tensor(trunc, device=self.device),
                cast(StepInfo, out_info))

    def steps_per_second(self) -> float:
        """Env steps per second of game time: the rate of a real-time video with one frame per step."""
        return float(self.vec.metadata.get("render_fps") or 30)

    def render_frames(self) -> Any:
        """One RGB frame per env (needs ``render_mode='rgb_array'``)."""
        return self.vec.render()

    def export_metadata(self) -> dict[str, Any]:
        """What a plain Gymnasium loop needs to run an exported policy (stored in exported policies)."""
        meta: dict[str, Any] = {"task_family": "gym", "env_id": self.cfg.env_id,
                                "obs_layout": [["observation", self.obs_dims["policy"]]],
                                "action_offset": self._action_offset, "clip_actions": self.cfg.clip_actions,
                                "max_episode_steps": self.max_episode_steps, "obs_mask": list(self.cfg.obs_mask)}
        if not self.action_spec.discrete:
            meta.update(action_low=list(self.action_spec.low or ()), action_high=list(self.action_spec.high or ()))
        return meta

    def close(self) -> None:
        self.vec.close()
