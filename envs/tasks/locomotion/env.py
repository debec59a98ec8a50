"""Velocity tracking (legged_gym's task) for any legged robot, on any ground and any physics backend.

The robot is a ``RobotSpec`` (``envs/robots/spec.py``), put into the scene and resolved by name once
(``envs/scenes/assemble.py``); every size and address comes from that resolution, none from a robot module.
``MujocoTask`` (``envs/tasks/base.py``) owns the physics, the random stream, the task state and checkpoints;
this class wires the jobs, each in its own module of this package:

    state.py          the per-env task state, declared once
    step.py           a step's named quantities from the physics readout (addresses resolved by name)
    commands.py       velocity commands: drawn, resampled, steered to a heading, held by a viewer
    observations.py   the observation table, each term's value and bound
    rewards.py        the reward terms, each a small function of the step's ``Context``
    terminations.py   falls, divergence, time-outs
    randomization.py  resets with domain randomization, pushes
    metrics.py        the iteration log, the evaluator's metrics
    export.py         the exported policy's metadata
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np
import torch

from envs.physics.base import PhysicsReadout
from envs.robots.mirror import TensorMirror, foot_pairs, has_twins, joint_mirror, observation_mirror, side_pairs
from envs.robots.names import match_each
from envs.robots.resolved import ResolvedRobot
from envs.robots.sides import check_declared
from envs.robots.spec import RobotSpec
from envs.scenes.assemble import build
from envs.tasks import bounds as speed
from envs.tasks.base import MujocoTask
from envs.tasks.locomotion import export, metrics, observations, rewards
from envs.tasks.locomotion.commands import Commands
from envs.tasks.locomotion.randomization import RANDOMIZED_FIELDS, Randomizer
from envs.tasks.locomotion.state import PRIVILEGED_TERMS, LocomotionState
from envs.tasks.locomotion.step import Addresses, Step
from envs.tasks.locomotion.terminations import Judge
from envs.tasks.locomotion_config import LocomotionEnvConfig
from envs.tasks.observations import ObservationLayout
from envs.tasks.reward_terms import weight_column, weights_of
from envs.terrain.generator import generate
from envs.terrain.ground import Ground
from envs.terrain.spawn import spawn_lift
from rl_core.env_api import ActionSpec, Obs, StepInfo
from rl_core.errors import UserError

RENDER_WINDOW_TILES = 1.5
"""A video on a generated terrain shows the floor within this many tiles (per axis) of where the robot started
to be filmed: 12 m with 8 m tiles, more than a 12 s evaluation episode walks (9.6 m at 0.8 m/s)."""


class LocomotionEnv(MujocoTask[LocomotionState]):
    """``cfg.num_envs`` copies of ``robot`` tracking random velocity commands; satisfies ``rl_core.env_api.VecEnv``."""

    cfg: LocomotionEnvConfig
    """The task's config."""

    def __init__(self, cfg: LocomotionEnvConfig, robot: RobotSpec, device: torch.device | str = "cpu"):
        if not isinstance(robot, RobotSpec):  # e.g. the former LocomotionEnv(cfg, device)
            raise TypeError(f"LocomotionEnv(cfg, robot, device): robot must be a RobotSpec, not {type(robot).__name__}")
        self.cfg = cfg
        weights = reward_weights(cfg)
        rewards.check_weights(weights)
        observations.check()
        self.terrain = generate(cfg.terrain) if cfg.terrain.type == "generated" else None
        self.robot: ResolvedRobot = build(robot, cfg.collisions, cfg.solver_iterations, cfg.ls_iterations,
                                          self.terrain)
        rb = self.robot
        J, F = self.num_joints, self.num_feet = rb.num_joints, rb.num_feet
        super().__init__(cfg, rb.model, RANDOMIZED_FIELDS, LocomotionState, {"joints": J, "feet": F}, device)
        self.camera, self.track_body = rb.camera, rb.base_body_id
        self.max_episode_length = self.episode_steps(cfg.episode_length_s)
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
        self._setup_rewards(weights)
        self.bounds: speed.SpeedBounds = speed.speed_bounds(
            self.model, rb.joint_dof_adr, rb.spec.base_height, math.sqrt(2.0) * cfg.randomization.push_vel_xy,
            cfg.speed_bound_margin)
        """Speeds beyond which a world has diverged (derived from the robot: ``envs/tasks/bounds.py``)."""
        self.judge = Judge(cfg, self.bounds, torch.tensor(self.bounds.joint_vel, device=self.device), self.adr,
                           self.model.nv)
        self.obs_bound = observations.bounds(self)
        """Per column of the noise-free observation: the largest magnitude a world within the speed bounds can
        show; a world beyond it (or a non-finite value) has diverged."""
        self.randomizer = Randomizer(cfg.randomization, self.model, self.adr, self.default_joint_pos,
                                     self._held_pos, rb.mass_body_id, self.spawn_height, self._uniform)
        self._offer_mirror()

    # ------------------------------------------------------------------------------------ set-up
    def _setup_actions(self) -> None:
        rb, dev = self.robot, self.device
        self.action_spec = ActionSpec(discrete=False, n=self.num_joints)
        self.default_joint_pos = torch.tensor(rb.default_joint_pos, device=dev, dtype=torch.float32)
        scales = rb.action_scale
        self.action_scale: float | torch.Tensor = (scales[0] if len(set(scales)) == 1 else
                                                   torch.tensor(scales, device=dev, dtype=torch.float32))
        """Joint target offset per unit of action: one number, or one per joint (actuator groups' own scales)."""
        self._held_pos = torch.tensor(rb.held_joint_pos, device=dev, dtype=torch.float32)
        identity = rb.ctrl_from_policy == tuple(range(self.num_joints))  # no held joints, servos in policy order
        self._ctrl_order = None if identity else torch.tensor(rb.ctrl_from_policy, dtype=torch.long, device=dev)
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
        self.obs_dims = {"policy": sum(n for _, n in self.obs.policy)}
        self.separate_critic = cfg.privileged_critic or bool(cfg.policy_exclude)
        """The critic reads its own group: every term without noise (exact scan), and with ``privileged_critic``
        the friction, added mass and gain factor."""
        if self.separate_critic:
            self.obs_dims["critic"] = self.obs.full_dim + (len(PRIVILEGED_TERMS) if cfg.privileged_critic else 0)

    def _setup_rewards(self, weights: dict[str, float]) -> None:
        cfg, rb, dev = self.cfg, self.robot, self.device
        self.reward_terms = {name: w * self.dt for name, w in weights.items() if w != 0.0}
        """Each switched-on reward term's weight times the control period."""
        self._reward_column = weight_column(self.reward_terms, dev)
        regex = cfg.reward_params.deviation_joints
        picked = match_each(rb.spec.name, "env.reward_params.deviation_joints", [regex], rb.joint_names,
                            "actuated joints") if regex else []
        self._deviation = torch.tensor(picked, dtype=torch.long, device=dev)
        left, right = foot_pairs(rb.foot_names, rb.spec.mirror)
        if "feet_distance" in self.reward_terms and not left:
            raise UserError(f"config error: env.rewards.feet_distance needs left_*/right_* feet; the feet: "
                            f"{', '.join(rb.foot_names)}")
        self._left_feet = torch.tensor(left, dtype=torch.long, device=dev)
        self._right_feet = torch.tensor(right, dtype=torch.long, device=dev)
        sides = side_pairs(rb.foot_names, rb.spec.mirror)
        self.side_feet = (torch.tensor(sides[0], dtype=torch.long, device=dev),
                          torch.tensor(sides[1], dtype=torch.long, device=dev)) if sides[0] else None
        """Columns of the left feet and of their right twins (FL/FR, RL/RR; left_/right_), None without sides."""

    def _offer_mirror(self) -> None:
        """Satisfy ``rl_core.env_api.Symmetric`` (``mirror_obs`` / ``mirror_actions`` as instance attributes) when
        the joints pair up by name and the standing pose is its own mirror; other robots do not offer it."""
        names, declared = self.robot.joint_names, self.robot.spec.mirror
        if declared is not None:
            check_declared(self.robot.spec.name, declared, names)
        rules = self.obs.mirror_rules()
        if not has_twins(names, declared) or self.separate_critic or "none" in rules.values():
            return  # rl_core's augmentation mirrors the policy group only (a critic group has no mirror)
        joints = TensorMirror(joint_mirror(names, declared), self.device)
        if not torch.allclose(joints(self.default_joint_pos), self.default_joint_pos, atol=1e-6):
            return
        self.mirror_actions = joints
        """Mirror of actions ``[..., joints]`` (twin joints swapped, roll / yaw / abduction angles negated)."""
        mirror = observation_mirror(self.obs_layout, rules, names, declared)
        self.mirror_obs = TensorMirror(mirror, self.device)
        """Mirror of raw policy observations (each term by its rule in ``observations.TABLE``)."""

    # ------------------------------------------------------------------------------------ the step
    def _act(self, actions: torch.Tensor) -> torch.Tensor:
        """Clip the actions and advance the physics by one control step; returns the clipped actions."""
        clip = self.cfg.clip_actions
        actions = actions.to(self.device).clamp(-clip, clip)
        targets = self.default_joint_pos + self.action_scale * actions
        if self.robot.num_held:
            targets = torch.cat([targets, self._held_pos.expand(targets.shape[0], -1)], dim=1)
        self.physics.step(targets if self._ctrl_order is None else targets[:, self._ctrl_order])
        return actions

    def _finish_step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        """Everything after the physics, top to bottom (torch only, fixed shapes, no host sync)."""
        cfg, state = self.cfg, self.state
        s = self.step_of(self.physics.read())
        state.episode_length += 1
        base_height = s.base_z - self.ground.height(s.base_xy)  # above the ground below
        if cfg.commands.heading:
            self.commands_of.steer(state, s.yaw)  # the step's yaw, shared with the height scan
        x = self._contacts_and_context(s, actions, base_height)
        stacked = rewards.TERMS.stacked(self.reward_terms, self._reward_column, x)  # [terms, N], weighted
        state.air_time *= ~(x.contact | state.last_contacts)  # contact_filt: this step's or the last one's
        state.last_contacts = x.contact
        reward = stacked.sum(0)
        if cfg.rewards.only_positive:
            reward = reward.clamp(min=0.0)
        diverged = self.judge.diverged(s, reward)
        terminated = self.judge.fell(s, base_height) | diverged
        # a time-out, or a robot about to walk off the generated terrain's edge (bootstrapped like a time-out)
        truncated = ((state.episode_length >= self.max_episode_length) | self.ground.outside(s.base_xy)) & ~terminated
        lin_err = torch.norm(state.commands[:, :2] - s.lin_vel_b[:, :2], dim=1)
        yaw_err = torch.abs(state.commands[:, 2] - s.ang_vel_b[:, 2])
        state.last_actions = actions
        state.last_joint_vel = s.joint_vel
        done = terminated | truncated
        commands = state.commands  # the ones this step tracked (resampling and resets replace the tensor)
        self.commands_of.sample(state, (state.episode_length % self.resample_steps == 0) & ~done)
        # The observation of the state after this step; for done envs it is the final one of their episode.
        final_obs, bad_obs = self._observed(s)
        late = bad_obs & ~diverged  # diverged in its observation only: ends here too
        diverged = diverged | bad_obs
        terminated, truncated, done = terminated | late, truncated & ~late, done | late
        reward = torch.where(diverged, 0.0, reward)  # a non-finite reward is a diverged world's (judge.diverged)
        valid = ~diverged
        state.max_travelled = torch.maximum(state.max_travelled, self.ground.travelled(s.base_xy))
        success = (state.max_travelled >= cfg.success_distance).float()
        # of the episodes that end here; a diverged one has none (it never counts as a success)
        ended = torch.where(done & valid, success, torch.full_like(success, math.nan))
        self._push(s.r, done)
        obs = final_obs
        if self._needed(done):
            self.ground.update_levels(done & valid, s.base_xy, commands, cfg.episode_length_s)  # not by a flight
            self.reset_envs(done)
            obs = self._restarted(done, final_obs)
        log = metrics.log(stacked, list(self.reward_terms), valid, lin_err, yaw_err, terminated, truncated, diverged)
        if self.terrain is not None:
            log["terrain_level"] = self.ground.mean_level()
        info: StepInfo = {
            "final_obs": final_obs if self._needed(truncated) else None, "log": log, "invalid": diverged,
            "episode_stats": {"success": ended},
            "metrics": metrics.per_step(lin_err, yaw_err, x.contact, self.robot.foot_names, self.side_feet),
            "breakdown": metrics.breakdown(commands)}
        return obs, reward, terminated, truncated, info

    def _contacts_and_context(self, s: Step, actions: torch.Tensor, base_height: torch.Tensor) -> rewards.Context:
        """Advance the feet's air and contact clocks; the reward terms' context of this step."""
        state, thr = self.state, self.cfg.contact_force_threshold
        contact = s.foot_force > thr
        first_contact = (state.air_time > 0) & (contact | state.last_contacts)
        state.air_time += self.dt
        state.contact_time = (state.contact_time + self.dt) * contact
        joint_offset = (s.joint_pos - self.default_joint_pos)[:, self._deviation]
        return rewards.Context(
            s=s, state=state, actions=actions, contact=contact, first_contact=first_contact,
            penalized_contact=s.penalized_force > thr, base_height=base_height, joint_offset=joint_offset,
            left_feet=self._left_feet, right_feet=self._right_feet, dt=self.dt, sigma=self.cfg.rewards.tracking_sigma,
            params=self.cfg.reward_params)

    def _push(self, r: PhysicsReadout, done: torch.Tensor) -> None:
        """Every ``push_steps`` a random push of the envs that go on (takes effect during the next step)."""
        if not self.push_steps:
            return
        push = (self.state.episode_length % self.push_steps == 0) & ~done
        if self._needed(push):
            self.randomizer.push(self.physics, r.qvel, push)

    # ------------------------------------------------------------------------------------ observations
    def step_of(self, r: PhysicsReadout) -> Step:
        """The named quantities of a readout."""
        return Step(r, self.adr, self.num_feet, bool(self.robot.num_held))

    def kinematics(self, r: PhysicsReadout) -> dict[str, torch.Tensor]:
        """Base velocities and gravity in the base frame, joint states and contact forces of a readout (what
        play.py's video and viewer show)."""
        s = self.step_of(r)
        return {"lin_vel_b": s.lin_vel_b, "ang_vel_b": s.ang_vel_b, "gravity_b": s.gravity_b,
                "joint_pos": s.joint_pos, "joint_vel": s.joint_vel, "foot_force": s.foot_force}

    def observe(self, r: PhysicsReadout) -> Obs:
        """The observation of a readout (noise drawn from the task's generator), as a step would return it."""
        return self._observation(self.step_of(r))[0]

    def _observed(self, s: Step) -> tuple[Obs, torch.Tensor]:
        """``_observation`` of every env and ``[N]`` bool: the world's observation was non-finite or beyond its
        bounds (every bound is finite: NaN and inf fail the ``<=``; the noise and the policy's columns are finite
        where the noise-free values are)."""
        out, exact = self._observation(s)
        bad = ~(exact.abs() <= self.obs_bound).all(dim=1)
        if self.separate_critic and self.cfg.privileged_critic:  # the critic's other columns
            bad = bad | ~torch.isfinite(self.state.privileged).all(dim=1)
        return out, bad

    def _observation(self, s: Step, rows: torch.Tensor | None = None) -> tuple[Obs, torch.Tensor]:
        """The policy observation (noisy; without the ``policy_exclude`` terms) and, with a separate critic, the
        critic's (noise-free); non-finite values replaced by 0. Also the noise-free observation. ``rows``: ``s``
        holds these envs only (the noise is still drawn for all envs, so the random stream and every observed value
        are those of a full observation)."""
        exact = self.obs.exact(observations.values(self, s, rows))
        obs = self.obs.for_policy(self.obs.noisy(exact, self.generator, self.num_envs, rows))
        out = {"policy": torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)}
        if self.separate_critic:
            privileged = self.state.privileged if rows is None else self.state.privileged[rows]
            critic = torch.cat([exact, privileged], dim=1) if self.cfg.privileged_critic else exact
            out["critic"] = torch.nan_to_num(critic, nan=0.0, posinf=0.0, neginf=0.0)
        return out, exact

    def _restarted(self, done: torch.Tensor, final_obs: Obs) -> Obs:
        """``final_obs`` with the rows of the envs just reset replaced by their first observation. On the CPU
        only those rows are observed (reading the mask costs nothing there; the height scan of every env was
        a third of the task logic's time on quadruped-rough); elsewhere all rows, at fixed shapes."""
        r = self.physics.read()
        if not self.fixed_shapes:
            rows = done.nonzero().squeeze(1)
            sub = PhysicsReadout(r.qpos[rows], r.qvel[rows], r.sensordata[rows], r.actuator_force[rows])
            fresh = self._observation(self.step_of(sub), rows)[0]
            return {g: final_obs[g].index_copy(0, rows, fresh[g]) for g in final_obs}
        fresh = self._observation(self.step_of(r))[0]  # (the step's observation was the one checked)
        return {g: torch.where(done.unsqueeze(1), fresh[g], final_obs[g]) for g in final_obs}

    # ------------------------------------------------------------------------------------ resets
    def reset_envs(self, mask: torch.Tensor) -> None:
        """Fresh randomized state, model parameters and commands for the masked envs (fixed shapes, no sync); their
        next observation is the first of their new episode."""
        self.randomizer.reset(self.physics, self.ground, self.state, mask)
        self.commands_of.sample(self.state, mask)
        self.state.clear(mask)

    def _reset_all(self) -> Obs:
        self.ground.draw_levels()
        self.reset_envs(self._all)
        if self.cfg.randomize_initial_episode_length:
            self.state.episode_length = torch.randint(0, self.max_episode_length, (self.num_envs,),
                                                      generator=self.generator, device=self.device)
        return self._observation(self.step_of(self.physics.read()))[0]

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
        return self.state.last_contacts

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
        cfg = self.cfg
        start = self.adr.base_pos.start
        x, y = self.physics.read().qpos[index, start:start + 2].tolist()
        window = (x, y, RENDER_WINDOW_TILES * self.terrain.tile_size)
        return build(self.robot.spec, cfg.collisions, cfg.solver_iterations, cfg.ls_iterations, self.terrain,
                     window).model

    def export_metadata(self) -> dict[str, Any]:
        """What a deployment needs (``export.py``; the schema: ``deploy/schema.py``)."""
        return export.metadata(self)

    def _extra_state(self) -> dict[str, torch.Tensor]:
        return {"terrain_levels": self.ground.levels.cpu()}

    def _load_extra_state(self, task: dict[str, torch.Tensor]) -> None:
        if "terrain_levels" in task:
            self.ground.levels.copy_(task["terrain_levels"])


def reward_weights(cfg: LocomotionEnvConfig) -> dict[str, float]:
    """The weight of every reward term: the float fields of RewardScales but the kernel width."""
    return weights_of(cfg.rewards, skip=("tracking_sigma",))
