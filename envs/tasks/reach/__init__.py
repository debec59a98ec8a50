"""The reaching task family: a fixed-base arm moving its fingertip to random targets (``env.py``)."""

from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.env import ReachEnv

__all__ = ["ReachEnv", "ReachEnvConfig"]
