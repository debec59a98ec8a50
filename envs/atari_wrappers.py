"""Per-game Atari wrappers from Gymnasium plus FIRE at the start of each life; no torch (``deploy/`` uses them).

The chain is the one of the DQN / CleanRL papers: no-op starts, frame skip with max-pooling of the last two
frames, 84x84 grayscale, FIRE after a reset or a lost life (in games that need it), then a stack of the last
frames. Episodes are whole games here; ``envs.atari`` turns lost lives into learner terminations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from contract.errors import UserError


def require_ale() -> None:
    """One-line error unless ale-py and OpenCV (AtariPreprocessing resizes with it) are installed."""
    from importlib.util import find_spec

    if find_spec("ale_py") is None or find_spec("cv2") is None:
        raise UserError("Atari tasks need ale-py and opencv: pip install -e '.[atari]'")


def register_ale() -> None:
    """Make the ALE ids known to Gymnasium (ale-py ships the ROMs)."""
    require_ale()
    import ale_py

    gym.register_envs(ale_py)


def is_atari_id(env_id: str) -> bool:
    """True for ALE ids: ``ALE/<Game>-v5`` and the classic ``<Game>NoFrameskip-v4``."""
    return env_id.startswith("ALE/") or env_id.endswith("NoFrameskip-v4")


def make_kwargs(env_id: str) -> dict[str, Any]:
    """``ALE/*-v5`` skips frames itself; the preprocessing does the skipping, so the base env must not."""
    return {"frameskip": 1} if env_id.startswith("ALE/") else {}


class FireOnLifeStart(gym.Wrapper):
    """Press FIRE after a reset and after each lost life, in games whose action 1 is FIRE (Breakout...).

    Without it a policy can stall forever before serving; with it, the ball is always in play.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        meanings = env.unwrapped.get_action_meanings()  # type: ignore[attr-defined]
        self.fires = len(meanings) > 1 and meanings[1] == "FIRE"

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        if self.fires:
            obs, _, term, trunc, info = self.env.step(1)
            if term or trunc:
                obs, info = self.env.reset(**kwargs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        lives = self.env.unwrapped.ale.lives()  # type: ignore[attr-defined]
        obs, reward, term, trunc, info = self.env.step(action)
        if self.fires and not (term or trunc) and info["lives"] < lives:
            obs, more, term, trunc, info = self.env.step(1)
            reward = float(reward) + float(more)
        return obs, float(reward), term, trunc, info


def wrapper(frame_skip: int, screen_size: int, noop_max: int, frame_stack: int, fire_on_life_start: bool
            ) -> Callable[[gym.Env], gym.Env]:
    """The per-env chain: preprocessing (whole games, raw rewards), FIRE, frame stack -> uint8 [stack, H, W]."""

    def wrap(env: gym.Env) -> gym.Env:
        env = gym.wrappers.AtariPreprocessing(env, noop_max=noop_max, frame_skip=frame_skip,
                                              screen_size=screen_size, terminal_on_life_loss=False,
                                              grayscale_obs=True, scale_obs=False)
        if fire_on_life_start:
            env = FireOnLifeStart(env)
        return gym.wrappers.FrameStackObservation(env, frame_stack)

    return wrap
