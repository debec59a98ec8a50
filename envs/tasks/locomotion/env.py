"""Velocity tracking (legged_gym's task) for any legged robot, on any ground and any physics backend.

The robot is a ``RobotSpec`` (``envs/robots/spec.py``), put into the scene and resolved by name once
(``envs/scenes/assemble.py``); every size and address comes from that resolution, none from a robot module.
``MujocoTask`` (``envs/tasks/base.py``) owns the physics, the random stream, the task state, checkpoints and
the step's recipe; this class assembles the recipe's parts (``envs/tasks/parts.py``) from the job modules, each
in its own module here, and gives the views play.py and the web viewer read:

    state.py          the per-env task state, declared once
    step.py           a step's named quantities from the physics readout (addresses resolved by name)
    measure.py        the step's quantities: height above the ground, contact clocks, reward context, errors
    commands.py       velocity commands: drawn, resampled, steered to a heading, held by a viewer
    observations.py   the observation table, each term's value and bound
    observer.py       the observation of a step (policy, history, critic) and its validity check
    rewards.py        the reward terms, each a small function of the step's ``Context``
    terminations.py   falls, the terrain's edge, the robot's speed bounds
    randomization.py  resets with domain randomization, pushes
    resets.py         a reset env's start and commands, pushes, the terrain curriculum
    latency.py        the actions applied after the drawn delay
    metrics.py        the evaluator's metrics, the logged errors, each episode's success
    export.py         the exported policy's metadata
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import mujoco
import numpy as np
import torch

from envs.physics.base import PhysicsReadout
from envs.robots.mirror import (
    GroupMirror,
    TensorMirror,
    foot_pairs,
    has_twins,
    joint_mirror,
    observation_mirror,
    side_pairs,
    with_unchanged,
)
from envs.robots.names import match_each
from envs.robots.resolved import ResolvedRobot
from envs.robots.sides import check_declared
from envs.robots.spec import RobotSpec
from envs.scenes.assemble import build
from envs.tasks import bounds as speed
from envs.tasks.base import MujocoTask
from envs.tasks.history import History, frame_width
from envs.tasks.locomotion import amp, export, latency, observations, rewards
from envs.tasks.locomotion.commands import Commands
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.measure import Measure, Measured
from envs.tasks.locomotion.measure import Robot as MeasuredRobot
from envs.tasks.locomotion.metrics import Reports
from envs.tasks.locomotion.observer import Observer
from envs.tasks.locomotion.randomization import Randomizer, fields_of
from envs.tasks.locomotion.resets import Resets
from envs.tasks.locomotion.state import PRIVILEGED_TERMS, LocomotionState
from envs.tasks.locomotion.step import Addresses, Step
from envs.tasks.locomotion.terminations import Ends, Judge
from envs.tasks.observations import ObservationLayout
from envs.tasks.parts import Events, TaskParts, Termination
from envs.tasks.reward_terms import weights_of
from envs.terrain.generator import generate
from envs.terrain.ground import Ground
from envs.terrain.spawn import spawn_lift
from rl_core.env_api import ActionSpec, Obs

RENDER_WINDOW_TILES = 1.5
"""A video on a generated terrain shows the floor within this many tiles (per axis) of where the robot started
to be filmed: 12 m with 8 m tiles, more than a 12 s evaluation episode walks (9.6 m at 0.8 m/s)."""


class LocomotionEnv(MujocoTask[LocomotionState]):
    """``cfg.num_envs`` copies of ``robot`` tracking random velocity commands; satisfies ``rl_core.env_api.VecEnv``."""

    cfg: LocomotionEnvConfig
    """The task's config."""
    headline_metrics = (("lin_vel_error", "lin_err"), ("yaw_rate_error", "yaw_err"))
    """The console line's metrics (``rl_core.env_api.Headlined``): velocity tracking errors, m/s and rad/s."""

    def __init__(self, cfg: LocomotionEnvConfig, robot: RobotSpec, device: torch.device | str = "cpu"):
        self.cfg = cfg
        self.terrain = generate(cfg.terrain) if cfg.terrain.type == "generated" else None
        self.robot: ResolvedRobot = build(robot, cfg.scene_options(self.terrain))
        rb = self.robot
        J, F = self.num_joints, self.num_feet = rb.num_joints, rb.num_feet
        scan = cfg.height_scan.num_points if cfg.height_scan.enabled else 0
        self.history = History(cfg.obs_history, frame_width(observations.TABLE, {"joints": J, "feet": F, "scan": scan},
                                                            cfg.policy_exclude))
        """The policy's observation history (``env.obs_history`` frames; 1: none)."""
        self.obs_frames = cfg.obs_history
        """Frames in the policy's observation (``rl_core.env_api.StackedObservations``: exported as its state)."""
        state = LocomotionState.merged(*rewards.TERMS.owned_states())  # with the fields reward terms own
        super().__init__(cfg, rb.model, fields_of(cfg.randomization), state,
                         {"joints": J, "feet": F, "delay": cfg.randomization.action_delay[1],
                          "history": self.history.past_width}, device)
        self.camera, self.track_body = rb.camera, rb.base_body_id
        self.resample_steps = max(1, round(cfg.commands.resample_s / self.dt))
        push_s = cfg.randomization.push_interval_s
        self.push_steps = max(1, round(push_s / self.dt)) if push_s > 0 else 0
        self.adr = Addresses.of(rb, self.device)
        """Readout columns by meaning, resolved by name once."""
        self.ground = Ground(cfg.terrain, self.terrain, cfg.height_scan, self.num_envs, self.device, self.generator)
        self.commands_of = Commands(cfg.commands, self.generator, self.device)
        self.breakdown_edges = self.commands_of.breakdown_edges
        self._setup_actions()
        self._setup_observation()
        self._setup_rewards()
        self.bounds: speed.SpeedBounds = speed.speed_bounds(
            self.model, rb.joint_dof_adr, rb.spec.base_height, math.sqrt(2.0) * cfg.randomization.push_vel_xy,
            cfg.speed_bound_margin)
        """Speeds beyond which a world has diverged (derived from the robot: ``envs/tasks/bounds.py``)."""
        self.judge = Judge(cfg, self.bounds, torch.tensor(self.bounds.joint_vel, device=self.device), self.adr,
                           self.model.nv)
        self.obs_sources = observations.Sources(self.default_joint_pos, self.ground, cfg)
        """What the observation terms read besides the step and the state."""
        self.obs_bound = self.obs.bounds(observations.BoundInputs(self.bounds, cfg, rb))
        """Per column of the noise-free observation: the largest magnitude a world within the speed bounds can
        show; a world beyond it (or a non-finite value) has diverged."""
        self.randomizer = Randomizer(cfg.randomization, self.model, self.adr, self.default_joint_pos,
                                     self.held_joint_pos, rb.mass_body_id, self.spawn_height, self._uniform)
        self._offer_mirror()
        self.amp: amp.AmpObservation | None = None
        """The AMP observation (with ``env.amp_clips``; None: this env offers no motion prior)."""
        if cfg.amp_clips:
            self._offer_amp()
        self.parts: TaskParts[Step, Measured] = self._assemble()

    # ------------------------------------------------------------------------------------ set-up
    def _assemble(self) -> TaskParts[Step, Measured]:
        """The step's parts from the job modules."""
        cfg, state, ground, rb = self.cfg, self.state, self.ground, self.robot
        measure = Measure(cfg, state, ground, self.commands_of, MeasuredRobot(
            self.adr, self.num_feet, self.held_pos is not None, self.default_joint_pos, self._deviation,
            self.reward_constants))
        resets = Resets(self.physics, state, ground, self.randomizer, self.commands_of, self.push_steps,
                        cfg.episode_length_s, self._needed)
        critic = None if not self.separate_critic else "privileged" if cfg.privileged_critic else "exact"
        observe = Observer(self.obs, self.obs_sources, state, self.history, self.obs_bound, critic, self.generator,
                           self.num_envs)
        ends = Ends(self.judge, ground)
        reports = Reports(state, ground, cfg.success_distance, rb.foot_names, self.side_feet,
                          self.terrain is not None, self.amp)
        events = Events(reset=resets.reset, after_step=measure.after_step, start_all=ground.draw_levels,
                        before_reset=resets.before_reset, episode_end=resets.update_levels,
                        after_observation=observe.keep_history if self.history.frames > 1 else None)
        return TaskParts(view=measure.view, measure=measure.measure, reward_context=measure.reward_context,
                         too_fast=self.judge.too_fast,
                         terminations=(Termination("fell", "fail", ends.fell),
                                       Termination("terrain_edge", "cut", ends.at_the_edge)),
                         resample=resets.resample, observe=observe, events=events, report=reports.report(),
                         applied=latency.delay_of(state))

    def _setup_actions(self) -> None:
        rb, dev = self.robot, self.device
        self.action_spec = ActionSpec(discrete=False, n=self.num_joints)
        self.default_joint_pos = torch.tensor(rb.default_joint_pos, device=dev, dtype=torch.float32)
        scales = rb.action_scale
        self.action_scale: float | torch.Tensor = (scales[0] if len(set(scales)) == 1 else
                                                   torch.tensor(scales, device=dev, dtype=torch.float32))
        """Joint target offset per unit of action: one number, or one per joint (actuator groups' own scales)."""
        self.held_joint_pos = torch.tensor(rb.held_joint_pos, device=dev, dtype=torch.float32)
        """The held joints' pose (rad), ``held_joint_names`` order."""
        self.held_pos = self.held_joint_pos if rb.num_held else None
        identity = rb.ctrl_from_policy == tuple(range(self.num_joints))  # no held joints, servos in policy order
        self.ctrl_order = None if identity else torch.tensor(rb.ctrl_from_policy, dtype=torch.long, device=dev)
        lift = 0.0 if self.terrain is None else spawn_lift(
            self.model, rb.base_qpos_adr, rb.joint_qpos_adr, rb.default_joint_pos,
            self.cfg.randomization.init_joint_scale, rb.spec.base_height)
        self.spawn_height = rb.spec.base_height + lift
        """Start height of the base above the ground under it (m): the spec's ``base_height``, on generated terrain
        raised until no collision geom starts inside the heightfield (``envs/terrain/spawn.py``)."""

    def _setup_observation(self) -> None:
        cfg = self.cfg
        scan = cfg.height_scan.num_points if cfg.height_scan.enabled else 0
        sizes = {"joints": self.num_joints, "feet": self.num_feet, "scan": scan}
        self.obs = ObservationLayout(observations.TABLE, sizes, cfg.policy_exclude, cfg, cfg.noise.scale, self.device)
        self.obs_layout = self.obs.policy
        """The policy's observation terms in order, ``(name, size)`` (exported for deployment)."""
        self.obs_dims = {"policy": self.history.frames * sum(n for _, n in self.obs.policy)}
        self.separate_critic = cfg.privileged_critic or bool(cfg.policy_exclude)
        """The critic reads its own group: every term without noise (exact scan), and with ``privileged_critic``
        the friction, added mass and gain factor."""
        if self.separate_critic:
            self.obs_dims["critic"] = self.obs.full_dim + (len(PRIVILEGED_TERMS) if cfg.privileged_critic else 0)

    def _setup_rewards(self) -> None:
        cfg, rb, dev = self.cfg, self.robot, self.device
        self._set_rewards(rewards.TERMS, reward_weights(cfg))
        self.only_positive_rewards = cfg.reward_params.only_positive
        regex = cfg.reward_params.deviation_joints
        picked = match_each(rb.spec.name, "env.reward_params.deviation_joints", [regex], rb.joint_names,
                            "actuated joints") if regex else []
        self._deviation = torch.tensor(picked, dtype=torch.long, device=dev)
        left, right = foot_pairs(rb.foot_names, rb.spec.mirror)
        self.reward_constants = rewards.Constants(
            foot_names=rb.foot_names, left_feet=torch.tensor(left, dtype=torch.long, device=dev),
            right_feet=torch.tensor(right, dtype=torch.long, device=dev), dt=self.dt,
            params=cfg.reward_params)
        """What the reward terms read that never changes (built once)."""
        rewards.TERMS.check_preconditions(self.reward_terms, self.reward_constants)
        sides = side_pairs(rb.foot_names, rb.spec.mirror)
        self.side_feet = (torch.tensor(sides[0], dtype=torch.long, device=dev),
                          torch.tensor(sides[1], dtype=torch.long, device=dev)) if sides[0] else None
        """Columns of the left feet and of their right twins (FL/FR, RL/RR; left_/right_), None without sides."""

    def _offer_mirror(self) -> None:
        """Satisfy ``rl_core.env_api.Symmetric`` (``mirror_obs`` / ``mirror_actions`` as instance attributes) when
        the joints pair up by name, every observed term has a mirror rule and the standing pose is its own mirror;
        other robots and tasks do not offer it."""
        names, declared = self.robot.joint_names, self.robot.spec.mirror
        if declared is not None:
            check_declared(self.robot.spec.name, declared, names)
        rules = self.obs.mirror_rules()
        if not has_twins(names, declared) or "none" in rules.values():
            return
        joints = TensorMirror(joint_mirror(names, declared), self.device)
        if not torch.allclose(joints(self.default_joint_pos), self.default_joint_pos, atol=1e-6):
            return
        self.mirror_actions = joints
        """Mirror of actions ``[..., joints]`` (twin joints swapped, roll / yaw / abduction angles negated)."""
        groups = {"policy": observation_mirror(self.obs_layout * self.history.frames, rules, names, declared)}
        if self.separate_critic:  # every term of the current step, then the privileged scalars (the same mirrored)
            critic = observation_mirror(self.obs.full, rules, names, declared)
            groups["critic"] = with_unchanged(critic, len(PRIVILEGED_TERMS)) if self.cfg.privileged_critic else critic
        self.mirror_obs = GroupMirror(groups, self.device)
        """Mirror of raw observations of a group, ``mirror_obs(obs, group="policy")``: each term by its rule in
        ``observations.TABLE``, each history frame of the policy's; the critic's privileged friction, added mass
        and gain factor unchanged."""

    def _offer_amp(self) -> None:
        """Satisfy ``rl_core.env_api.MotionPrior`` (instance attributes) with the clips of ``env.amp_clips``."""
        observe = amp.AmpObservation(self.robot, self.default_joint_pos, self.device)
        reference = amp.AmpReference(self.cfg.amp_clips, self.robot, 1.0 / self.dt, observe, self.device,
                                       self.cfg.amp_check_clips, self.cfg.amp_csv_fps)
        self.amp = observe
        self.amp_obs_dim = observe.dim
        """Width of the AMP observation."""
        self.amp_reference = reference.sample
        """``n`` reference transitions (s, s') from the clips."""

    def amp_observation(self) -> torch.Tensor:
        """The AMP observation of every env's current state (``env.amp_clips`` set)."""
        assert self.amp is not None, "env.amp_clips is empty: this env offers no AMP observation"
        r = self.physics.read()
        return self.amp(r.qpos, r.qvel)

    # ------------------------------------------------------------------------------------ observations
    def step_of(self, r: PhysicsReadout) -> Step:
        """The named quantities of a readout."""
        return Step(r, self.adr, self.num_feet, self.held_pos is not None)

    def kinematics(self, r: PhysicsReadout) -> dict[str, torch.Tensor]:
        """Base velocities and gravity in the base frame, joint states and contact forces of a readout (what
        play.py's video and viewer show)."""
        s = self.step_of(r)
        return {"lin_vel_b": s.lin_vel_b, "ang_vel_b": s.ang_vel_b, "gravity_b": s.gravity_b,
                "joint_pos": s.joint_pos, "joint_vel": s.joint_vel, "foot_force": s.foot_force}

    def observe(self, r: PhysicsReadout) -> Obs:
        """The observation of a readout (noise drawn from the task's generator), as a step would return it."""
        return self.parts.observe(self.step_of(r), check=False)[0]

    # ------------------------------------------------------------------------------------ resets
    def hold_commands(self, commands: torch.Tensor | None, heading: torch.Tensor | None = None) -> None:
        """Interactive play (``play.py --web``): from now on every env tracks ``commands`` ``[N, 3]`` (and, with
        ``commands.heading``, steers towards ``heading`` ``[N]`` rad), through resampling and resets; None: random
        commands again. The observation shows them from the next step on."""
        self.commands_of.hold(self.state, commands, heading)

    # ------------------------------------------------------------------------------------ views
    @property
    def commands(self) -> torch.Tensor:
        """Current commands ``[N, 3]`` (vx, vy, yaw rate)."""
        return self.state.commands

    @property
    def last_contacts(self) -> torch.Tensor:
        """Feet on the ground after the last step ``[N, F]``."""
        return rewards.clocks(self.state).last_contacts

    def measured(self, index: int) -> np.ndarray:
        """Env ``index``'s base velocity as commanded: (vx, vy, yaw rate) in the base frame."""
        s = self.step_of(self.physics.read())
        return np.concatenate([s.lin_vel_b[index, :2].cpu().numpy(), s.ang_vel_b[index, 2:].cpu().numpy()])

    def caption(self, index: int) -> str:
        """The command of env ``index`` and what its robot does."""
        cmd, vel = self.state.commands[index].cpu().numpy(), self.measured(index)
        return (f"command  vx {cmd[0]:+.2f}  vy {cmd[1]:+.2f} m/s  yaw {cmd[2]:+.2f} rad/s\n"
                f"actual   vx {vel[0]:+.2f}  vy {vel[1]:+.2f} m/s  yaw {vel[2]:+.2f} rad/s")

    def render_model(self, index: int) -> mujoco.MjModel:
        """The model to film env ``index`` with from now on: on a generated terrain the same scene with only the
        floor within ``RENDER_WINDOW_TILES`` tiles of the robot's base (the full heightfield costs a software
        renderer seconds per frame); on a plane the simulated model."""
        if self.terrain is None:
            return self.model
        start = self.adr.base_pos.start
        x, y = self.physics.read().qpos[index, start:start + 2].tolist()
        window = (x, y, RENDER_WINDOW_TILES * self.terrain.tile_size)
        options = dataclasses.replace(self.cfg.scene_options(self.terrain), floor_window=window)
        return build(self.robot.spec, options).model

    def export_metadata(self) -> dict[str, Any]:
        """What a deployment needs (``export.py``; the schema: ``contract/schema.py``)."""
        return export.metadata(self.cfg, self.robot, self.obs, self.dt, self.terrain)

    def _extra_state(self) -> dict[str, torch.Tensor]:
        return {"terrain_levels": self.ground.levels.cpu().clone(),
                "hardware_ramp_steps": self.randomizer.steps.cpu().clone()}

    def _load_extra_state(self, task: dict[str, torch.Tensor]) -> None:
        if "terrain_levels" in task:
            self.ground.levels.copy_(task["terrain_levels"])
        if "hardware_ramp_steps" in task:
            self.randomizer.steps.copy_(task["hardware_ramp_steps"])


def reward_weights(cfg: LocomotionEnvConfig) -> dict[str, float]:
    """The weight of every reward term: the fields of ``RewardScales``."""
    return weights_of(cfg.rewards)
