"""Velocity tracking for legged robots (legged_gym's task): ``LocomotionEnv`` and its jobs (``env.py`` lists them)."""

from envs.tasks.locomotion.env import LocomotionEnv
from envs.tasks.locomotion.observations import OBS_SCALES
from envs.tasks.locomotion.randomization import RANDOMIZED_FIELDS
from envs.tasks.locomotion.state import PRIVILEGED_TERMS
from envs.tasks.locomotion.terminations import MAX_SANE_QVEL

__all__ = ["LocomotionEnv", "MAX_SANE_QVEL", "OBS_SCALES", "PRIVILEGED_TERMS", "RANDOMIZED_FIELDS"]
