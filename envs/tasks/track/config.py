"""Typed config of the motion-tracking family (``humanoid-track``, ``path/to/robot.py:track``); every field has a
docstring. Nested sections are overridden as ``env.<section>.<field>=value``, e.g. ``env.rewards.body_pos=2.0``,
``env.clips=[walk.npz,keyframes:squat_wave]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Optional

from envs.scenes.options import SceneOptions
from envs.tasks.locomotion.config import NoiseConfig
from envs.tasks.mujoco_config import MujocoEnvConfig
from rl_core.config_io import check_types, require


@dataclass(frozen=True)
class TrackRewardScales:
    """Weights of the reward terms (``envs/tasks/track/rewards.py``; each is multiplied by the control period).

    Every tracking term is ``exp(-error / sigma)`` with its sigma in ``env.reward_params``; a zero weight switches a
    term off. Each is logged as ``Env/rew_<name>``."""

    anchor_pos: float = 0.5
    """The anchor body's position error (m^2, squared distance to the reference's, world frame)."""
    anchor_ori: float = 0.5
    """The anchor body's orientation error (rad^2, squared angle of the rotation to the reference's)."""
    body_pos: float = 1.0
    """Body position error relative to the anchor (m^2, mean over the tracked bodies of the squared distance; the
    reference is moved onto the robot's anchor: its horizontal position and heading)."""
    body_ori: float = 1.0
    """Body orientation error relative to the anchor (rad^2, mean over the tracked bodies)."""
    body_lin_vel: float = 1.0
    """Body linear velocity error ((m/s)^2, mean over the tracked bodies, world frame)."""
    body_ang_vel: float = 1.0
    """Body angular velocity error ((rad/s)^2, mean over the tracked bodies, world frame)."""
    joint_pos: float = 0.5
    """Joint position error (rad^2, mean over the joints)."""
    action_rate: float = -0.1
    """Change of the actions since the last step, squared and summed (a penalty, not a kernel)."""


@dataclass(frozen=True)
class TrackRewardParams:
    """The sigma of each tracking kernel ``exp(-error / sigma)``, in the error's units (BeyondMimic / mjlab's
    standard deviations, squared)."""

    anchor_pos: float = 0.09
    """m^2: (0.3 m)^2."""
    anchor_ori: float = 0.16
    """rad^2: (0.4 rad)^2."""
    body_pos: float = 0.09
    """m^2: (0.3 m)^2."""
    body_ori: float = 0.16
    """rad^2: (0.4 rad)^2."""
    body_lin_vel: float = 1.0
    """(m/s)^2: (1 m/s)^2."""
    body_ang_vel: float = 9.86
    """(rad/s)^2: (3.14 rad/s)^2."""
    joint_pos: float = 0.09
    """rad^2: (0.3 rad)^2."""

    def __post_init__(self) -> None:
        check_types(self, "env.reward_params.")
        for f in ("anchor_pos", "anchor_ori", "body_pos", "body_ori", "body_lin_vel", "body_ang_vel", "joint_pos"):
            require(getattr(self, f) > 0, f"env.reward_params.{f}", getattr(self, f), "a number > 0")


@dataclass(frozen=True)
class StartConfig:
    """Where episodes start: a frame of the env's clip, drawn where the policy fails most, with the robot put in the
    reference's state there plus a little noise."""

    adaptive: bool = True
    """Draw start frames by failure: each clip is cut into bins of ``bin_s``; a bin's weight is its smoothed share
    of failures plus ``uniform_share`` spread over all bins, and the bins just before a failing one share its
    weight (``kernel`` decays by ``kernel_decay`` per bin). False: uniform over the clip."""
    bin_s: float = 1.0
    """Seconds of clip per bin."""
    uniform_share: float = 0.1
    """The share of the weight spread evenly over the bins (every start stays possible)."""
    failure_smoothing: float = 0.001
    """Per control step, the failure counts move this fraction towards the last step's (an exponential average)."""
    kernel: int = 3
    """Bins a failure spreads its weight back over (1: only its own)."""
    kernel_decay: float = 0.8
    """Weight factor per bin back from a failing one."""
    base_xy: float = 0.05
    """Uniform offset of the base's horizontal position at the start (m, half-width)."""
    base_yaw: float = 0.1
    """Uniform offset of the base's heading at the start (rad, half-width)."""
    joint_pos: float = 0.05
    """Uniform offset of the joint angles at the start (rad, half-width; within the joint limits)."""

    def __post_init__(self) -> None:
        check_types(self, "env.start.")
        require(self.bin_s > 0, "env.start.bin_s", self.bin_s, "a number > 0")
        require(0 < self.uniform_share <= 1, "env.start.uniform_share", self.uniform_share, "a number in (0, 1]")
        require(0 < self.failure_smoothing <= 1, "env.start.failure_smoothing", self.failure_smoothing,
                "a number in (0, 1]")
        require(self.kernel >= 1, "env.start.kernel", self.kernel, "an integer >= 1")
        require(0 < self.kernel_decay <= 1, "env.start.kernel_decay", self.kernel_decay, "a number in (0, 1]")
        for f in ("base_xy", "base_yaw", "joint_pos"):
            require(getattr(self, f) >= 0, f"env.start.{f}", getattr(self, f), "a number >= 0")


@dataclass(frozen=True)
class TrackEnvConfig(MujocoEnvConfig):
    """A robot reproducing motion clips: every joint trained, one clip per env (``envs/tasks/track/``)."""

    num_envs: int = 1024
    """Number of robots simulated in lock-step (each plays clip ``i % len(clips)``)."""
    episode_length_s: float = 10.0
    """Time-out of an episode (truncated, bootstrapped); reaching the clip's last frame also ends it so."""
    randomize_initial_episode_length: bool = False
    """Episodes start at random frames of their clip already: time-outs do not synchronize."""
    clips: tuple[str, ...] = ()
    """The motion clips, one per env in turn: files (.npz of legged-mjx or mjlab, .csv of Unitree's LAFAN1
    retargeting) or ``keyframes:NAME`` (a preset of envs/motion/keyframes.py, e.g. keyframes:squat_wave)."""
    csv_fps: float = 30.0
    """Frame rate of .csv clips (LAFAN1: 30)."""
    check_clips: bool = True
    """Refuse implausible clips in one line before training (``envs/motion/plausible.py``: a base upside down, a
    wrong frame rate, joints beyond their ranges); false: train on them anyway."""
    release_welded: bool = True
    """Welded joints of the robot's spec that a clip moves are released and trained (``envs/tasks/track/robot.py``);
    false: kept welded (such a clip is then refused)."""
    anchor_body: str = ""
    """The body whose pose the policy observes relative to the reference's, and that the terminations watch (empty:
    ``torso_link`` when the robot has a body of that name, BeyondMimic's and mjlab's anchor, else its base body)."""
    bodies: tuple[str, ...] = (".*",)
    """Regexes over the robot's body names: the bodies of the body terms (every body of the robot by default)."""
    future_frames: int = 2
    """Reference frames the policy observes ahead (the next one, and so on)."""
    anchor_height_band: float = 0.25
    """The episode fails when the anchor's height differs from the reference's by more than this (m)."""
    anchor_tilt_band: float = 0.8
    """The episode fails when the vertical component of gravity in the anchor's frame differs from the reference's
    by more than this (0 upright vs 1 lying: about 0.8 is 37 degrees off)."""
    rewards: TrackRewardScales = field(default_factory=TrackRewardScales)
    """Reward term weights."""
    reward_params: TrackRewardParams = field(default_factory=TrackRewardParams)
    """Kernel widths of the tracking terms."""
    start: StartConfig = field(default_factory=StartConfig)
    """Start frames and the noise of the start state."""
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    """Observation noise (the velocity-tracking task's levels)."""
    clip_actions: float = 100.0
    """Actions are clipped to [-clip_actions, clip_actions] before they become joint targets."""
    collisions: Literal["full", "feet"] = "full"
    """Which robot geoms collide with the floor (``envs/scenes``): full or feet."""
    solver_iterations: Optional[int] = None
    """Constraint-solver iterations (None: the robot's)."""
    ls_iterations: Optional[int] = None
    """Line-search iterations (None: the robot's)."""
    speed_bound_margin: float = 1.0
    """Multiplies the robot's speed bounds beyond which a world has diverged (``envs/tasks/bounds.py``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.csv_fps > 0, "env.csv_fps", self.csv_fps, "a number > 0")
        require(self.future_frames >= 1, "env.future_frames", self.future_frames, "an integer >= 1")
        require(self.anchor_height_band > 0, "env.anchor_height_band", self.anchor_height_band, "a number > 0")
        require(0 < self.anchor_tilt_band <= 2, "env.anchor_tilt_band", self.anchor_tilt_band, "a number in (0, 2]")
        require(len(self.bodies) >= 1, "env.bodies", list(self.bodies), "one or more regexes over body names")
        for name in ("solver_iterations", "ls_iterations"):
            value = getattr(self, name)
            require(value is None or value >= 1, f"env.{name}", value, "null or an integer >= 1")
        require(self.speed_bound_margin > 0, "env.speed_bound_margin", self.speed_bound_margin, "a number > 0")

    def scene_options(self) -> SceneOptions:
        """How the task's scene is built (``envs/scenes/assemble.build``): its collisions and solver settings."""
        return SceneOptions(self.collisions, self.solver_iterations, self.ls_iterations,
                            decimation=self.decimation)

    def for_evaluation(self) -> TrackEnvConfig:
        """Evaluation: start frames uniform over the clip (no adaptive sampling), no start noise."""
        return replace(self, start=replace(self.start, adaptive=False, base_xy=0.0, base_yaw=0.0, joint_pos=0.0))
