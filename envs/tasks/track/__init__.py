"""The motion-tracking task family: a robot reproducing motion clips, every joint trained (``env.py``)."""

from envs.tasks.track.config import TrackEnvConfig
from envs.tasks.track.env import TrackEnv

__all__ = ["TrackEnv", "TrackEnvConfig"]
