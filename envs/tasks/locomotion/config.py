"""Typed config of the velocity-tracking locomotion task (every ``*-flat`` / ``*-rough`` task); every field has a
docstring.

Nested sections are overridden from the command line as ``env.<section>.<field>=value``, e.g.
``env.rewards.orientation=-2.0`` or ``env.commands.lin_vel_x=[-2,2]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Optional

from envs.scenes.options import SceneOptions
from envs.tasks.locomotion.obs_table import TERM_NAMES
from envs.tasks.mujoco_config import MujocoEnvConfig
from envs.terrain.config import TILE_TYPES, HeightScanConfig, TerrainConfig
from envs.terrain.generator import Terrain
from rl_core.config_io import check_types, require

Range = tuple[float, float]
TERRAIN_EVAL_EPISODE_S = 12.0
"""Episode length (s) of the evaluation on one tile type at one level (``on_terrain``; sim2sim's too): 4 m at
0.5 m/s take 8 s, 12 s leave room for slowing down on steps."""
TERRAIN_EVAL_SPEED: Range = (0.5, 0.8)
"""Forward speed command range (m/s) of that evaluation: straight ahead, no sideways motion, no turning."""


def _check_range(value: Range, name: str) -> None:
    require(len(value) == 2 and value[0] <= value[1], name, list(value), "a pair [low, high] with low <= high")


@dataclass(frozen=True)
class CommandConfig:
    """Velocity commands, drawn uniformly per env and resampled every ``resample_s`` seconds."""

    lin_vel_x: Range = (-1.0, 1.0)
    """Forward velocity command range (m/s, body frame)."""
    lin_vel_y: Range = (-0.5, 0.5)
    """Sideways velocity command range (m/s, body frame)."""
    yaw_rate: Range = (-1.0, 1.0)
    """Yaw-rate command range (rad/s)."""
    resample_s: float = 10.0
    """Seconds between command resamples."""
    min_lin_vel: float = 0.2
    """Linear commands with a norm below this are set to zero (standing in place, possibly turning)."""
    standing_share: float = 0.0
    """Share of the drawn commands that are all zero (stand still, no turning); 0 draws no extra random numbers."""
    heading: bool = False
    """Draw a heading (uniform over all directions) instead of a yaw rate; the yaw-rate command of each step is
    then ``heading_gain`` x the heading error, clipped to ``yaw_rate`` (legged_gym's rough-terrain commands:
    robots walk straight, so the terrain curriculum's distances mean something)."""
    heading_gain: float = 0.5
    """heading: yaw-rate command per radian of heading error (1/s)."""

    def __post_init__(self) -> None:
        check_types(self, "env.commands.")
        for name in ("lin_vel_x", "lin_vel_y", "yaw_rate"):
            _check_range(getattr(self, name), f"env.commands.{name}")
        require(self.resample_s > 0, "env.commands.resample_s", self.resample_s, "a number > 0")
        require(self.min_lin_vel >= 0, "env.commands.min_lin_vel", self.min_lin_vel, "a number >= 0")
        require(self.heading_gain > 0, "env.commands.heading_gain", self.heading_gain, "a number > 0")
        require(0 <= self.standing_share <= 1, "env.commands.standing_share", self.standing_share, "a number in [0, 1]")


@dataclass(frozen=True)
class RewardScales:
    """Weights of the reward terms (legged_gym names and values; each is multiplied by the control period).

    A zero weight switches the term off. Every term is logged as ``Env/rew_<name>`` per iteration.
    """

    tracking_lin_vel: float = 1.0
    """exp(-|v_xy - cmd_xy|^2 / ``RewardParams.tracking_sigma``): follow the linear velocity command (body
    frame)."""
    tracking_ang_vel: float = 0.5
    """exp(-(w_z - cmd_yaw)^2 / ``RewardParams.tracking_sigma``): follow the yaw-rate command."""
    lin_vel_z: float = -2.0
    """Vertical base velocity squared."""
    ang_vel_xy: float = -0.05
    """Roll and pitch rates squared."""
    orientation: float = -5.0
    """Horizontal components of the gravity direction in the body frame, squared (tilt)."""
    torques: float = -1e-5
    """Joint torques squared."""
    dof_acc: float = -2.5e-7
    """Joint accelerations squared."""
    action_rate: float = -0.01
    """Change of the action between control steps, squared."""
    feet_air_time: float = 1.0
    """At each touchdown, the foot's air time minus ``RewardParams.air_time_offset`` (only while a linear velocity
    is commanded)."""
    feet_slip: float = -0.1
    """Horizontal speed squared of the feet that touch the ground."""
    collision: float = -1.0
    """Number of penalized bodies (the robot spec's ``penalized_contacts``: the calves) touching the floor."""
    feet_air_time_biped: float = 0.0
    """Bipeds: in single stance, the shorter of the stance foot's contact time and the swing foot's air time,
    capped at ``RewardParams.air_time_threshold`` (only while a linear velocity is commanded)."""
    feet_clearance: float = 0.0
    """Swing feet: (height - ``RewardParams.feet_clearance_height``)^2 times tanh(2 |horizontal foot speed|)."""
    feet_distance: float = 0.0
    """Left-right foot pairs closer sideways (in the heading frame) than ``RewardParams.feet_min_distance``, or
    crossed: the shortfall (m)."""
    base_height: float = 0.0
    """(base height - ``RewardParams.base_height_target``)^2 (flat ground)."""
    joint_deviation: float = 0.0
    """Squared offset from the default pose of the joints ``RewardParams.deviation_joints`` matches."""
    energy: float = 0.0
    """Mechanical power: sum of |torque x joint velocity| (W)."""
    alive: float = 0.0
    """1 per step the episode goes on: with the total clipped at zero, falling otherwise costs a biped nothing
    while its penalties outweigh its tracking rewards."""

    def __post_init__(self) -> None:
        check_types(self, "env.rewards.")


@dataclass(frozen=True)
class RewardParams:
    """Targets and thresholds of the reward terms and how their total is formed (per robot, like the weights); not
    weights themselves (``RewardScales`` holds only weights)."""

    tracking_sigma: float = 0.25
    """tracking_lin_vel, tracking_ang_vel: width of the tracking kernels exp(-error^2 / tracking_sigma)."""
    air_time_offset: float = 0.5
    """feet_air_time: seconds subtracted from a foot's air time at its touchdown (a shorter step costs)."""
    air_time_threshold: float = 0.4
    """feet_air_time_biped: cap (s) of the rewarded single-stance time."""
    base_height_target: float = 0.0
    """base_height: the base height (m) to hold."""
    feet_clearance_height: float = 0.1
    """feet_clearance: height (m) of the foot's sensor site (the foot geom's centre) in swing."""
    feet_min_distance: float = 0.15
    """feet_distance: smallest sideways distance (m) between a left and a right foot."""
    deviation_joints: str = ""
    """joint_deviation: regex over the actuated joints' names (resolved at build time; empty: none)."""
    only_positive: bool = True
    """Clip the total reward of a step at zero from below (legged_gym); avoids learning early termination."""

    def __post_init__(self) -> None:
        check_types(self, "env.reward_params.")
        require(self.tracking_sigma > 0, "env.reward_params.tracking_sigma", self.tracking_sigma, "a number > 0")
        require(self.air_time_offset >= 0, "env.reward_params.air_time_offset", self.air_time_offset,
                "a number >= 0")
        require(self.air_time_threshold > 0, "env.reward_params.air_time_threshold", self.air_time_threshold,
                "a number > 0")


@dataclass(frozen=True)
class NoiseConfig:
    """Uniform observation noise (in physical units, before the observation scales)."""

    scale: float = 1.0
    """Multiplies every noise level below; 0 turns noise off."""
    lin_vel: float = 0.1
    """Base linear velocity noise (m/s)."""
    ang_vel: float = 0.2
    """Base angular velocity noise (rad/s)."""
    gravity: float = 0.05
    """Projected gravity noise."""
    joint_pos: float = 0.01
    """Joint position noise (rad)."""
    joint_vel: float = 1.5
    """Joint velocity noise (rad/s)."""

    def __post_init__(self) -> None:
        check_types(self, "env.noise.")
        require(self.scale >= 0, "env.noise.scale", self.scale, "a number >= 0")


@dataclass(frozen=True)
class RandomizationConfig:
    """Domain randomization, drawn per env at each of its resets, and random pushes."""

    friction: Range = (0.5, 1.25)
    """Sliding friction of the feet and floor."""
    added_base_mass: Range = (-1.0, 2.0)
    """Mass added to the torso (kg)."""
    gain_scale: Range = (0.9, 1.1)
    """Factor on the PD gains (kp and kv together)."""
    push_interval_s: float = 15.0
    """Seconds between pushes of an env (0: no pushes)."""
    push_vel_xy: float = 1.0
    """A push sets the base's horizontal velocity to a uniform value in [-push_vel_xy, push_vel_xy] (m/s)."""
    init_joint_scale: Range = (0.5, 1.5)
    """At reset, joint positions are the default pose times a uniform factor in this range."""
    init_base_vel: float = 0.5
    """At reset, each base velocity component is uniform in [-init_base_vel, init_base_vel]."""
    motor_strength: Range = (1.0, 1.0)
    """Factor on every servo's torque, drawn per env at each reset: its stiffness, damping and torque limit
    together (a weaker or stronger motor; the rehearsal's ``motor strength``). (1, 1): off, nothing drawn."""
    kp_scale: Range = (1.0, 1.0)
    """Factor on every servo's stiffness alone (on top of ``gain_scale`` and ``motor_strength``), drawn per env at
    each reset. (1, 1): off, nothing drawn."""
    kd_scale: Range = (1.0, 1.0)
    """Factor on every servo's damping alone (on top of ``gain_scale`` and ``motor_strength``), drawn per env at
    each reset. (1, 1): off, nothing drawn."""
    action_delay: tuple[int, int] = (0, 0)
    """Latency in control steps ``[low, high]``: each env applies the action its policy chose this many steps
    before (drawn uniformly per env at each reset, both ends included; before an episode's first actions the
    servos hold the default pose). A delay of d steps is d x control_dt of sensor-to-motor latency (the
    rehearsal's added latency). The observed ``last_actions`` stay the policy's own latest, as on a robot.
    (0, 0): off."""
    hardware_ramp_steps: int = 0
    """The robot-hardware randomization (``motor_strength``, ``kp_scale``, ``kd_scale``, ``action_delay``) widens
    from none to its full ranges over the run's first this many control steps: an env reset after ``s`` steps draws
    from the ranges scaled by ``min(1, s / hardware_ramp_steps)`` about 1 (the latency: above its low end). The count
    is saved with the envs' state, so a resume goes on where it was. 0: the full ranges from the first step."""

    def __post_init__(self) -> None:
        check_types(self, "env.randomization.")
        for name in ("friction", "added_base_mass", "gain_scale", "init_joint_scale", "motor_strength", "kp_scale",
                     "kd_scale", "action_delay"):
            _check_range(getattr(self, name), f"env.randomization.{name}")
        require(self.friction[0] > 0, "env.randomization.friction", list(self.friction), "values > 0")
        for name in ("gain_scale", "motor_strength", "kp_scale", "kd_scale"):
            require(getattr(self, name)[0] > 0, f"env.randomization.{name}", list(getattr(self, name)), "values > 0")
        require(self.action_delay[0] >= 0, "env.randomization.action_delay", list(self.action_delay),
                "a pair [low, high] of control steps, 0 <= low <= high")
        require(self.push_interval_s >= 0, "env.randomization.push_interval_s", self.push_interval_s, "a number >= 0")
        require(self.hardware_ramp_steps >= 0, "env.randomization.hardware_ramp_steps", self.hardware_ramp_steps,
                "an integer >= 0 (control steps; 0: no ramp)")


@dataclass(frozen=True)
class LocomotionEnvConfig(MujocoEnvConfig):
    """Batched velocity tracking (legged_gym's task) on a plane or generated terrain, on any physics backend; the
    batch and backend fields are ``MujocoEnvConfig``'s."""

    MOVED_KEYS: ClassVar[dict[str, str]] = {"rewards.tracking_sigma": "reward_params.tracking_sigma",
                                            "rewards.only_positive": "reward_params.only_positive"}
    """Old key -> new key of the fields that moved (``rl_core.config_io.moved_key``): the config of a checkpoint
    written before the weights stood apart from the parameters (checkpoint format 2 and older) is read at the new
    place; an override with an old key is one line naming the new one."""
    ADDED_KEYS: ClassVar[dict[str, Any]] = {"reward_params.air_time_offset": 0.5,
                                            "randomization.hardware_ramp_steps": 0}
    """Key -> the value the code used before the field existed (``rl_core.config_io.added_keys``): a config saved
    before ``air_time_offset`` (checkpoint format 2 and older) paid air time beyond legged_gym's 0.5 s, whatever
    its task's default is now (``quadruped-flat``: 0.25); one saved before ``hardware_ramp_steps`` drew the full
    hardware ranges from the first step (a ``:deploy`` task's default is now ``DEPLOY_RAMP_STEPS``)."""

    collisions: Literal["full", "feet"] = "full"
    """full: torso, thighs, calves and feet collide with the floor; a torso or thigh contact ends the episode and
    calf contacts are penalized (legged_gym). feet: only the feet collide (MuJoCo Playground's MJX Go1 model);
    a fall is a tilt beyond ``fall_tilt`` or the torso below ``fall_height``, and the calf penalty senses
    nothing. MJX evaluates every candidate contact at every substep, so feet cuts its physics cost (24 contact
    slots -> 4); native MuJoCo only processes real contacts and runs as fast either way."""
    fall_tilt: float = 1.0
    """collisions=feet: the episode ends (terminated) when the torso tilts more than this from upright (rad)."""
    fall_height: float = 0.15
    """collisions=feet: the episode ends (terminated) when the torso centre is below this height (m)."""
    min_base_height: float = 0.0
    """collisions=full: the episode also ends (terminated) when the base is below this height (m); 0: off."""
    solver_iterations: Optional[int] = None
    """Constraint-solver iterations per substep (null: the model's 4). MJX runs every iteration in every env;
    Playground's MJX locomotion models use 1."""
    ls_iterations: Optional[int] = None
    """Line-search iterations per solver iteration (null: the model's 6; Playground's MJX models use 5)."""
    episode_length_s: float = 20.0
    """Time-out of an episode (truncation, bootstrapped)."""
    randomize_initial_episode_length: bool = True
    """Start the run with random episode clocks so that time-outs do not synchronize across envs."""
    clip_actions: float = 100.0
    """Actions are clipped to [-clip_actions, clip_actions] before scaling."""
    contact_force_threshold: float = 1.0
    """A touch sensor reading above this (N) counts as contact."""
    commands: CommandConfig = field(default_factory=CommandConfig)
    """Velocity commands."""
    rewards: RewardScales = field(default_factory=RewardScales)
    """Reward weights."""
    reward_params: RewardParams = field(default_factory=RewardParams)
    """Targets and thresholds of the reward terms."""
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    """Observation noise."""
    randomization: RandomizationConfig = field(default_factory=RandomizationConfig)
    """Domain randomization and pushes."""
    terrain: TerrainConfig = field(default_factory=TerrainConfig)
    """The ground: a plane, or generated tiles with a curriculum (``envs/terrain``)."""
    height_scan: HeightScanConfig = field(default_factory=HeightScanConfig)
    """Terrain heights around the base in the observations."""
    privileged_critic: bool = False
    """Give the critic its own observations: the policy's terms without noise, the exact height scan (when
    enabled), and the randomized friction, added base mass and gain factor (an asymmetric actor-critic)."""
    policy_exclude: tuple[str, ...] = ()
    """Observation terms left out of the policy's observation, e.g. [base_lin_vel]: a real robot has no sensor for
    its base velocity (``quadruped-flat-blind``). The critic then reads its own group: every term, noise-free."""
    obs_history: int = 1
    """Frames the policy observes: the current observation and the ``obs_history - 1`` before it, oldest first
    (zeros before an episode's first; ``envs/tasks/history.py``). 1: the current one only. An exported policy
    carries the past frames as its recurrent state, so a robot feeds one frame per step. The critic's own group
    (with ``policy_exclude`` or ``privileged_critic``) reads the current step only."""
    speed_bound_margin: float = 1.0
    """Multiplies the robot's derived speed bounds (``envs/tasks/bounds.py``: base linear and angular speed, each
    joint's speed); a world beyond them has diverged: it is reset, its transition not learned from (Env/diverged)."""
    success_distance: float = 4.0
    """An episode succeeds (``success`` in the evaluation) once the base is this far (m) from its start tile's
    centre (plane: the origin), counted until a fall ends it."""
    amp_clips: tuple[str, ...] = ()
    """Motion clips (.npz, or .csv of the LAFAN1 retargeting) whose transitions are the reference of adversarial
    motion priors (algorithm.name=amp; docs/motion.md): the env then offers its AMP observation (joints, base height
    and velocities in the heading frame, gravity, feet relative to the base). Empty: no AMP."""
    amp_csv_fps: float = 30.0
    """Frame rate of the .csv clips of ``amp_clips`` (Unitree's LAFAN1 retargeting: 30)."""
    amp_check_clips: bool = True
    """Refuse an implausible AMP clip in one line before training (``envs/motion/plausible.py``: the first frame
    tilted as by a w x y z / x y z w mix-up, a wrong frame rate, joints out of range); false uses it anyway."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(0 < self.fall_tilt <= math.pi, "env.fall_tilt", self.fall_tilt, "a number in (0, pi] (radians)")
        require(self.fall_height >= 0, "env.fall_height", self.fall_height, "a number >= 0 (metres)")
        require(self.min_base_height >= 0, "env.min_base_height", self.min_base_height, "a number >= 0 (metres)")
        for name in ("solver_iterations", "ls_iterations"):
            value = getattr(self, name)
            require(value is None or value >= 1, f"env.{name}", value, "null or an integer >= 1")
        allowed = TERM_NAMES
        for term in self.policy_exclude:
            require(term in allowed, "env.policy_exclude", list(self.policy_exclude),
                    "a list of observation terms among " + ", ".join(allowed))
        require(len(set(self.policy_exclude)) < len(allowed) - (0 if self.height_scan.enabled else 1),
                "env.policy_exclude", list(self.policy_exclude), "a list that leaves the policy at least one term")
        require(self.obs_history >= 1, "env.obs_history", self.obs_history, "an integer >= 1 (frames)")
        require(self.speed_bound_margin > 0, "env.speed_bound_margin", self.speed_bound_margin, "a number > 0")
        require(self.success_distance > 0, "env.success_distance", self.success_distance, "a number > 0")
        require(self.contact_force_threshold >= 0, "env.contact_force_threshold", self.contact_force_threshold,
                "a number >= 0")

    def scene_options(self, terrain: Terrain | None = None) -> SceneOptions:
        """How the task's scene is built (``envs/scenes/assemble.build``): its collisions and solver settings, with
        ``terrain`` (a generated one, ``envs/terrain/generator.py``) as the floor instead of the plane."""
        return SceneOptions(self.collisions, self.solver_iterations, self.ls_iterations, terrain,
                            decimation=self.decimation)

    def for_evaluation(self) -> LocomotionEnvConfig:
        """Evaluation: every episode starts at t = 0 and nobody pushes; noise and randomization stay on."""
        return replace(self, randomize_initial_episode_length=False,
                       randomization=replace(self.randomization, push_interval_s=0.0))

    def on_terrain(self, tile_type: str, level: int, episode_s: float = TERRAIN_EVAL_EPISODE_S,
                   speed: Range = TERRAIN_EVAL_SPEED) -> LocomotionEnvConfig:
        """Evaluation on one tile type at one level: every column of that type, every env on that level (no
        curriculum), straight-ahead commands at ``speed`` (m/s) with no turning, episodes of ``episode_s``."""
        require(tile_type in TILE_TYPES, "--terrain", tile_type, "one of " + ", ".join(TILE_TYPES))
        require(0 <= level < self.terrain.levels, "--level", level, f"an integer in [0, {self.terrain.levels - 1}]")
        shares = {name: 1.0 if name == tile_type else 0.0 for name in TILE_TYPES}
        terrain = replace(self.terrain, type="generated", fixed_level=level, curriculum=False,
                          proportions=type(self.terrain.proportions)(**shares))
        commands = replace(self.commands, lin_vel_x=speed, lin_vel_y=(0.0, 0.0), yaw_rate=(0.0, 0.0),
                           min_lin_vel=0.0, standing_share=0.0, resample_s=episode_s + 1.0,
                           heading=False)
        return replace(self.for_evaluation(), terrain=terrain, commands=commands, episode_length_s=episode_s)
