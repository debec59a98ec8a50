"""Typed config of the reaching task (``arm-reach``); every field has a docstring.

Nested sections are overridden from the command line as ``env.<section>.<field>=value``, e.g.
``env.rewards.action_rate=-0.02`` or ``env.targets.radius=[0.2,0.45]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from envs.tasks.mujoco_config import MujocoEnvConfig
from rl_core.config_io import check_types, require

Range = tuple[float, float]


def _check_range(value: Range, name: str, low: float = -math.inf, high: float = math.inf) -> None:
    require(len(value) == 2 and low <= value[0] <= value[1] <= high, name, list(value),
            f"a pair [low, high] with {low} <= low <= high <= {high}")


@dataclass(frozen=True)
class TargetConfig:
    """Where targets appear: uniform in a spherical shell sector around the shoulder, redrawn every
    ``resample_s`` seconds (and at every reset)."""

    radius: Range = (0.2, 0.5)
    """Distance of the target from the shoulder (m); the arm reaches 0.57 m from it."""
    azimuth: Range = (-2.2, 2.2)
    """Direction around the vertical axis (rad; 0 is the arm's +x; the base turns within +-2.6 rad)."""
    elevation: Range = (-0.3, 1.2)
    """Angle above the shoulder's horizontal plane (rad)."""
    min_height: float = 0.05
    """Targets lower than this above the floor (m) are lifted to it."""
    resample_s: float = 2.0
    """Seconds between new targets within an episode."""

    def __post_init__(self) -> None:
        check_types(self, "env.targets.")
        _check_range(self.radius, "env.targets.radius", 0.0, 0.57)
        _check_range(self.azimuth, "env.targets.azimuth", -math.pi, math.pi)
        _check_range(self.elevation, "env.targets.elevation", -math.pi / 2, math.pi / 2)
        require(self.min_height >= 0, "env.targets.min_height", self.min_height, "a number >= 0")
        require(self.resample_s > 0, "env.targets.resample_s", self.resample_s, "a number > 0")


@dataclass(frozen=True)
class ReachRewardScales:
    """Weights of the reward terms (``envs/tasks/reach/rewards.py``; each is multiplied by the control period).

    A zero weight switches the term off. Every term is logged as ``Env/rew_<name>`` per iteration.
    """

    reach: float = 1.0
    """exp(-d^2 / reach_sigma), d the fingertip-to-target distance (m): pulls from afar."""
    reach_fine: float = 2.0
    """exp(-d^2 / fine_sigma): the last centimetres."""
    action_rate: float = -0.01
    """Change of the actions since the last step, squared."""
    joint_vel: float = -0.001
    """Joint speeds squared (rad/s)^2."""


@dataclass(frozen=True)
class ReachRewardParams:
    """Widths of the distance kernels."""

    reach_sigma: float = 0.05
    """Width of the coarse kernel (m^2): 1/e at 0.22 m."""
    fine_sigma: float = 0.001
    """Width of the fine kernel (m^2): 1/e at 3.2 cm."""

    def __post_init__(self) -> None:
        check_types(self, "env.reward_params.")
        for name in ("reach_sigma", "fine_sigma"):
            require(getattr(self, name) > 0, f"env.reward_params.{name}", getattr(self, name), "a number > 0")


@dataclass(frozen=True)
class ReachNoise:
    """Uniform observation noise (half-widths in physical units, times ``scale``)."""

    scale: float = 1.0
    """Multiplies every level below (0: no noise)."""
    joint_pos: float = 0.005
    """Joint angle noise (rad)."""
    joint_vel: float = 0.1
    """Joint speed noise (rad/s)."""
    target: float = 0.002
    """Noise of the target and fingertip-to-target vectors (m)."""

    def __post_init__(self) -> None:
        check_types(self, "env.noise.")
        for name in ("scale", "joint_pos", "joint_vel", "target"):
            require(getattr(self, name) >= 0, f"env.noise.{name}", getattr(self, name), "a number >= 0")


@dataclass(frozen=True)
class ReachEnvConfig(MujocoEnvConfig):
    """A fixed-base 4-joint arm (``envs/tasks/reach/arm.xml``) moving its fingertip to random targets."""

    num_envs: int = 512
    """Number of arms simulated in lock-step."""
    decimation: int = 4
    """Physics substeps per control step (0.005 s timestep: 50 Hz control)."""
    episode_length_s: float = 4.0
    """Episode length (s); episodes end by this time-out only (truncated, bootstrapped), or by divergence."""
    randomize_initial_episode_length: bool = True
    """Start the first episodes at random times (time-outs do not all fall on the same step)."""
    targets: TargetConfig = field(default_factory=TargetConfig)
    """Where and how often targets appear."""
    rewards: ReachRewardScales = field(default_factory=ReachRewardScales)
    """Reward term weights."""
    reward_params: ReachRewardParams = field(default_factory=ReachRewardParams)
    """Kernel widths of the distance terms."""
    noise: ReachNoise = field(default_factory=ReachNoise)
    """Observation noise."""
    action_scale: float = 1.0
    """Joint target offset from the default pose per unit of action (rad)."""
    clip_actions: float = 3.0
    """Actions are clipped to [-clip_actions, clip_actions] first (the servos then clip to the joint range)."""
    init_joint_noise: float = 0.3
    """Joint angles at a reset: the default pose plus a uniform offset of this half-width (rad), within limits."""
    success_radius: float = 0.025
    """An episode whose fingertip ends within this distance of its target (m) is a success."""
    max_joint_vel: float = 100.0
    """A joint faster than this (rad/s) means the simulation has diverged (terminated, not learned from). Under
    uniform random actions over the whole clip range the joints stay below 40 rad/s (tests/envs/tasks/test_reach.py)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("action_scale", "success_radius", "max_joint_vel"):
            require(getattr(self, name) > 0, f"env.{name}", getattr(self, name), "a number > 0")
        require(self.init_joint_noise >= 0, "env.init_joint_noise", self.init_joint_noise, "a number >= 0")

    def for_evaluation(self) -> ReachEnvConfig:
        """Evaluation: every episode starts at t = 0 (noise stays on)."""
        return replace(self, randomize_initial_episode_length=False)
