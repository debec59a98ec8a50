"""Atari games (ALE) as a batched pixel env: uint8 frame stacks, clipped rewards, lost lives as terminations.

What the learner sees follows the DQN / CleanRL setup: rewards clipped to their sign, and a lost life ends
the learner's episode (no bootstrap) while the game itself goes on. What is reported is the game: every
finished game's raw score goes to ``info["episode_stats"]["game_score"]`` (TensorBoard ``Episode/game_score``).
``play.py`` evaluates whole games with raw rewards (``for_evaluation``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from envs import atari_wrappers
from envs.gym import GymEnvConfig, GymVecEnv
from rl_core.config_io import require
from rl_core.env_api import Obs


@dataclass(frozen=True)
class AtariEnvConfig(GymEnvConfig):
    """An ALE game with the standard preprocessing (Gymnasium's AtariPreprocessing and frame stacking)."""

    env_id: str = "BreakoutNoFrameskip-v4"
    """ALE id: <Game>NoFrameskip-v4 (no sticky actions, as in CleanRL) or ALE/<Game>-v5 (sticky actions)."""
    frame_skip: int = 4
    """Emulator frames per agent step (the action repeats; the last two frames are max-pooled)."""
    screen_size: int = 84
    """Observed frames are resized to screen_size x screen_size grayscale."""
    frame_stack: int = 4
    """Number of most recent frames in each observation (its channel axis)."""
    noop_max: int = 30
    """A game starts after a random number of no-op steps in [0, noop_max]."""
    terminal_on_life_loss: bool = True
    """A lost life ends the learner's episode (not the game); play.py's evaluation always plays whole games."""
    fire_on_life_start: bool = True
    """Press FIRE after a reset and after each lost life in games that need it (Breakout...)."""
    clip_rewards: bool = True
    """The learner gets sign(reward); the game score logged and evaluated is always the raw one."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(atari_wrappers.is_atari_id(self.env_id), "env.env_id", self.env_id,
                "an ALE id such as BreakoutNoFrameskip-v4 or ALE/Breakout-v5")
        require(self.frame_skip >= 1, "env.frame_skip", self.frame_skip, "an integer >= 1")
        require(self.screen_size >= 36, "env.screen_size", self.screen_size,
                "an integer >= 36 (the CNN's smallest input)")
        require(self.frame_stack >= 1, "env.frame_stack", self.frame_stack, "an integer >= 1")
        require(self.noop_max >= 0, "env.noop_max", self.noop_max, "an integer >= 0")

    def for_evaluation(self) -> AtariEnvConfig:
        return dataclasses.replace(self, terminal_on_life_loss=False, clip_rewards=False)


class AtariVecEnv(GymVecEnv):
    """``[N, frame_stack, screen, screen]`` uint8 observations; discrete actions."""

    obs_dtype = torch.uint8
    cfg: AtariEnvConfig

    def _wrappers(self) -> list[Callable[[gym.Env], gym.Env]]:
        c = self.cfg
        return [atari_wrappers.wrapper(c.frame_skip, c.screen_size, c.noop_max, c.frame_stack, c.fire_on_life_start)]

    def _make_kwargs(self) -> dict[str, Any]:
        return atari_wrappers.make_kwargs(self.cfg.env_id)

    def __init__(self, cfg: AtariEnvConfig, device: str | torch.device = "cpu"):
        atari_wrappers.register_ale()
        super().__init__(cfg, device)
        self._obs_shape = tuple(int(x) for x in self.vec.single_observation_space.shape or ())
        self.obs_shapes = {"policy": self._obs_shape}
        self._lives = np.zeros(self.num_envs, dtype=np.int64)
        self._score = np.zeros(self.num_envs, dtype=np.float64)

    def reset(self, seed: int | None = None) -> Obs:
        obs, info = self.vec.reset(seed=seed)
        self._lives[:] = info["lives"]
        self._score[:] = 0.0
        return self._obs(obs)

    def _post_step(self, rew: np.ndarray, term: np.ndarray, trunc: np.ndarray, info: dict[str, Any]
                   ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        game_over = term | trunc
        lives = np.asarray(info["lives"], dtype=np.int64)  # of the next game where one ended
        life_lost = (lives < self._lives) & ~game_over
        self._lives[:] = lives
        self._score += rew
        score = np.where(game_over, self._score, np.nan).astype(np.float32)
        self._score[game_over] = 0.0
        learner_term = term | life_lost if self.cfg.terminal_on_life_loss else term
        learner_rew = np.sign(rew).astype(np.float32) if self.cfg.clip_rewards else rew
        return learner_rew, learner_term, {"episode_stats": {"game_score": torch.as_tensor(score, device=self.device)}}

    def steps_per_second(self) -> float:
        return 60.0 / self.cfg.frame_skip  # the Atari 2600 draws 60 frames/s (NTSC); one step is frame_skip of them

    def export_metadata(self) -> dict[str, Any]:
        meta = super().export_metadata()
        c = self.cfg
        meta.update(obs_layout=[["frames", self.obs_dims["policy"]]],
                    atari={"frame_skip": c.frame_skip, "screen_size": c.screen_size, "noop_max": c.noop_max,
                           "frame_stack": c.frame_stack, "fire_on_life_start": c.fire_on_life_start})
        return meta
