"""Velocity-tracking locomotion on flat ground (legged_gym's task) for any legged robot, on any physics backend.

The robot is a ``RobotSpec`` (``envs/robots/spec.py``), put into the scene and resolved by name once
(``envs/scenes/assemble.py``); every size and address below comes from that resolution, none from a robot
module. The physics backend simulates; everything else here is torch over its readout: commands, the
observation (12 + 3 x joints values: 48 for 12 joints), the reward terms (a name -> function table,
``locomotion_rewards.TERMS``), terminations (kept apart from time-outs), per-env resets, domain randomization,
pushes and observation noise. All randomness comes from one torch generator, saved in the checkpoint along
with the physics state, so a resumed CPU run continues bit-identically.
"""

from __future__ import annotations

import base64
import itertools
import math
import zlib
from dataclasses import asdict, fields
from typing import Any

import mujoco
import numpy as np

import torch

from envs.physics.base import PhysicsReadout
from envs.physics.cpu_threads import single_threaded
from envs.physics.factory import make_physics, resolve_backend
from envs.robots.mirror import TensorMirror, foot_pairs, has_twins, joint_mirror, observation_mirror, side_pairs
from envs.robots.sides import check_declared
from envs.robots.names import match_each
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.scenes.assemble import build
from envs.tasks.bounds import SpeedBounds, speed_bounds
from envs.tasks import locomotion_rewards as R
from envs.tasks.graphed_step import GraphedStep
from envs.tasks.locomotion_config import OBS_TERMS, LocomotionEnvConfig
from envs.tasks.rotations import from_yaw, rotate_inverse
from envs.terrain.generator import generate
from envs.terrain.ground import Ground, yaw_of
from envs.terrain.spawn import spawn_lift
from rl_core import breakdown
from rl_core.errors import UserError
from rl_core.env_api import ActionSpec, Obs, StepInfo

OBS_SCALES = {"lin_vel": 2.0, "ang_vel": 0.25, "joint_pos": 1.0, "joint_vel": 0.05, "height_scan": 5.0}
"""Observation scales (legged_gym); the commands use the matching lin_vel / ang_vel scales. They keep every term
near [-1, 1] for policies without an observation normalizer (``policy.normalize_obs=false``, legged_gym's way)."""
MAX_SANE_QVEL = 1e3
"""A generalized velocity beyond this (m/s or rad/s) means the simulation has diverged (any robot; each robot
also has tighter bounds derived from its size, ``envs/tasks/bounds.py``)."""
COMMANDS = ("lin_vel_x", "lin_vel_y", "yaw_rate")
"""Command components in order (body-frame m/s, m/s, rad/s)."""
RANDOMIZED_FIELDS = ("geom_friction", "body_mass", "actuator_gainprm", "actuator_biasprm")
"""Model fields that get per-env values."""
RENDER_WINDOW_TILES = 1.5
"""A video on a generated terrain shows the floor within this many tiles (per axis) of where the robot started
to be filmed: 12 m with 8 m tiles, more than a 12 s evaluation episode walks (9.6 m at 0.8 m/s)."""


def columns(addresses: tuple[int, ...], device: torch.device) -> slice | torch.Tensor:
    """Index of the given columns: a slice (a view, no copy) when they are contiguous, else an index tensor."""
    if addresses and list(addresses) == list(range(addresses[0], addresses[0] + len(addresses))):
        return slice(addresses[0], addresses[0] + len(addresses))
    return torch.tensor(addresses, dtype=torch.long, device=device)


def scene_bytes(model: mujoco.MjModel) -> str:
    """The compiled model as MJB bytes, zlib-compressed and base64-encoded (meshes and textures included)."""
    buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    return base64.b64encode(zlib.compress(buffer.tobytes(), 9)).decode("ascii")


class LocomotionEnv:
    """``cfg.num_envs`` copies of ``robot`` tracking random velocity commands; satisfies ``rl_core.env_api.VecEnv``."""

    def __init__(self, cfg: LocomotionEnvConfig, robot: RobotSpec, device: torch.device | str = "cpu"):
        if not isinstance(robot, RobotSpec):  # e.g. the former LocomotionEnv(cfg, device)
            raise TypeError(f"LocomotionEnv(cfg, robot, device): robot must be a RobotSpec, not {type(robot).__name__}")
        self.cfg = cfg
        device = torch.device(device)
        self.backend = resolve_backend(cfg.backend, device)
        weights = _reward_weights(cfg)
        R.check_weights(weights)
        self.terrain = generate(cfg.terrain) if cfg.terrain.type == "generated" else None
        self.robot: ResolvedRobot = build(robot, cfg.collisions, cfg.solver_iterations, cfg.ls_iterations,
                                          self.terrain)
        self._swing_names = tuple(self.robot.foot_names)
        self.model = self.robot.model
        N = self.num_envs = cfg.num_envs
        self.physics = make_physics(self.model, N, cfg.decimation, RANDOMIZED_FIELDS, self.backend,
                                    device, cfg.physics_threads, cfg.mjx_impl, cfg.warp_nconmax, cfg.warp_njmax)
        self.device = dev = self.physics.device
        self.dt = cfg.decimation * self.model.opt.timestep
        self.max_episode_length = math.ceil(cfg.episode_length_s / self.dt)
        self.resample_steps = max(1, round(cfg.commands.resample_s / self.dt))
        push_s = cfg.randomization.push_interval_s
        self.push_steps = max(1, round(push_s / self.dt)) if push_s > 0 else 0
        rb = self.robot
        J, F = self.num_joints, self.num_feet = rb.num_joints, rb.num_feet
        self.generator = torch.Generator(dev)
        scan = cfg.height_scan
        self.ground = Ground(cfg.terrain, self.terrain, scan, N, dev, self.generator)
        lift = 0.0 if self.terrain is None else spawn_lift(
            self.model, rb.base_qpos_adr, rb.joint_qpos_adr, rb.default_joint_pos,
            cfg.randomization.init_joint_scale, rb.spec.base_height)
        self.spawn_height = rb.spec.base_height + lift
        """Start height of the base above the ground under it (m): the spec's ``base_height``, on generated terrain
        raised until no collision geom starts inside the heightfield (``envs/terrain/spawn.py``)."""
        P = scan.num_points if scan.enabled else 0
        full = tuple(zip(OBS_TERMS, (3, 3, 3, 3, J, J, J))) + ((("height_scan", P),) if P else ())
        self.obs_layout = tuple((name, n) for name, n in full if name not in cfg.policy_exclude)
        """The policy's observation terms in order, ``(name, size)`` (exported for deployment)."""
        starts = dict(zip((name for name, _ in full), itertools.accumulate((n for _, n in full), initial=0)))
        kept = [c for name, n in self.obs_layout for c in range(starts[name], starts[name] + n)]
        full_dim = sum(n for _, n in full)
        self._policy_columns = None if len(kept) == full_dim else torch.tensor(kept, dtype=torch.long, device=dev)
        self.obs_dims = {"policy": len(kept)}
        self.separate_critic = cfg.privileged_critic or bool(cfg.policy_exclude)
        """The critic reads its own group: every term without noise (exact scan), and with ``privileged_critic``
        the friction, added mass and gain factor."""
        if self.separate_critic:
            self.obs_dims["critic"] = full_dim + (len(PRIVILEGED_TERMS) if cfg.privileged_critic else 0)
        self.action_spec = ActionSpec(discrete=False, n=J)

        f32: dict[str, Any] = dict(device=dev, dtype=torch.float32)
        self.default_joint_pos = torch.tensor(rb.default_joint_pos, **f32)
        scales = rb.action_scale
        self.action_scale: float | torch.Tensor = scales[0] if len(set(scales)) == 1 else torch.tensor(scales, **f32)
        """Joint target offset per unit of action: one number, or one per joint (actuator groups' own scales)."""
        self._held_pos = torch.tensor(rb.held_joint_pos, **f32)
        self._held_qpos = columns(rb.held_qpos_adr, dev)
        self.torso_id = rb.base_body_id
        self._defaults = {name: torch.tensor(getattr(self.model, name), **f32) for name in RANDOMIZED_FIELDS}
        self._qpos0 = torch.tensor(self.model.qpos0, **f32)
        # Every address by name, resolved once (slices where contiguous: views, no copies).
        b = rb.base_qpos_adr
        self._base_pos, self._base_quat = slice(b, b + 3), slice(b + 3, b + 7)
        v = rb.base_dof_adr
        self._base_linvel, self._base_angvel, self._base_dofs = slice(v, v + 3), slice(v + 3, v + 6), slice(v, v + 6)
        self._joint_qpos = columns(rb.joint_qpos_adr, dev)
        self._joint_dof = columns(rb.joint_dof_adr, dev)
        identity = rb.ctrl_from_policy == tuple(range(J))  # no held joints, servos created in policy order
        self._ctrl_order = None if identity else torch.tensor(rb.ctrl_from_policy, dtype=torch.long, device=dev)
        self._foot_touch = columns(rb.foot_touch_adr, dev)
        self._foot_vel = columns(rb.foot_vel_adr, dev)
        self._term_force = columns(rb.termination_force_adr, dev)
        self._pen_force = columns(rb.penalized_force_adr, dev)
        nb = len(rb.penalized_bodies)
        self._pen_bodies = None if rb.penalized_body_of == tuple(range(nb)) else (
            nb, torch.tensor(rb.penalized_body_of, dtype=torch.long, device=dev))
        s = OBS_SCALES
        self.cmd_scale = torch.tensor([s["lin_vel"], s["lin_vel"], s["ang_vel"]], **f32)
        n = cfg.noise
        self.noise_vec = cfg.noise.scale * torch.cat([
            torch.full((3,), n.lin_vel * s["lin_vel"]), torch.full((3,), n.ang_vel * s["ang_vel"]),
            torch.full((3,), n.gravity), torch.zeros(3), torch.full((J,), n.joint_pos * s["joint_pos"]),
            torch.full((J,), n.joint_vel * s["joint_vel"]), torch.zeros(J), torch.full((P,), scan.noise * s["height_scan"])]).to(dev)
        self.reward_terms = {name: w * self.dt for name, w in weights.items() if w != 0.0}
        self.bounds: SpeedBounds = speed_bounds(self.model, rb.joint_dof_adr, rb.spec.base_height,
                                                math.sqrt(2.0) * cfg.randomization.push_vel_xy, cfg.speed_bound_margin)
        """Speeds beyond which a world has diverged (derived from the robot: ``envs/tasks/bounds.py``)."""
        self._joint_bound = torch.tensor(self.bounds.joint_vel, **f32)
        self._obs_bound = self._observation_bound(full)
        """Per column of the noise-free observation (``exact``): the largest magnitude a world within the speed
        bounds can show; a world beyond it (or a non-finite value) has diverged."""
        # Inputs of the biped terms, resolved by name once.
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
        self._foot_pos = columns(rb.foot_pos_adr, dev)
        sides = side_pairs(rb.foot_names, rb.spec.mirror)
        self._side_feet = tuple(torch.tensor(c, dtype=torch.long, device=dev) for c in sides) if sides[0] else None
        """Columns of the left feet and of their right twins (FL/FR, RL/RR; left_/right_), None without sides."""
        policy_of_ctrl = sorted(range(J), key=lambda a: rb.ctrl_from_policy[a])  # actuator driving each joint
        if rb.num_held:  # the actuators of the trained joints only, in policy order
            policy_of_ctrl = [rb.ctrl_from_policy.index(i) for i in range(J)]
        self._torque_order = None if identity else torch.tensor(policy_of_ctrl, dtype=torch.long, device=dev)
        self.breakdown_edges = {name: breakdown.edges(*getattr(cfg.commands, name)) for name in COMMANDS}
        self._offer_mirror()

        # Task state (checkpointed).
        self.commands = torch.zeros(N, 3, **f32)
        self.episode_length = torch.zeros(N, dtype=torch.long, device=dev)
        self.last_actions = torch.zeros(N, J, **f32)
        self.last_joint_vel = torch.zeros(N, J, **f32)
        self.air_time = torch.zeros(N, F, **f32)
        self.contact_time = torch.zeros(N, F, **f32)
        self.last_contacts = torch.zeros(N, F, dtype=torch.bool, device=dev)
        self.max_travelled = torch.zeros(N, **f32)
        self.heading = torch.zeros(N, **f32)
        self.privileged = torch.zeros(N, len(PRIVILEGED_TERMS), **f32)
        self._all = torch.ones(N, dtype=torch.bool, device=dev)
        self._held: tuple[torch.Tensor, torch.Tensor] | None = None  # hold_commands: (commands [N, 3], heading [N])
        self._cpu = dev.type == "cpu"
        self._cos_fall_tilt = math.cos(cfg.fall_tilt)
        graphable = cfg.cuda_graph and self.backend == "warp" and dev.type == "cuda"
        self._graphed = GraphedStep(self, self._act, self._finish_step, _TASK_STATE, self.generator) if graphable else None

    def _offer_mirror(self) -> None:
        """Satisfy ``rl_core.env_api.Symmetric`` (``mirror_obs`` / ``mirror_actions`` as instance attributes) when
        the joints pair up by name and the standing pose is its own mirror; other robots do not offer it."""
        names, declared = self.robot.joint_names, self.robot.spec.mirror
        if declared is not None:
            check_declared(self.robot.spec.name, declared, names)
        if not has_twins(names, declared) or self.cfg.height_scan.enabled or self.separate_critic:
            return  # rl_core's augmentation mirrors the policy group only (a critic group has no mirror)
        joints = TensorMirror(joint_mirror(names, declared), self.device)
        if not torch.allclose(joints(self.default_joint_pos), self.default_joint_pos, atol=1e-6):
            return
        self.mirror_actions = joints
        """Mirror of actions ``[..., joints]`` (twin joints swapped, roll / yaw / abduction angles negated)."""
        self.mirror_obs = TensorMirror(observation_mirror(self.obs_layout, names, declared), self.device)
        """Mirror of raw policy observations (``envs/robots/mirror.py``: vectors (x, -y, z), angular velocity
        (-x, y, -z), commands (vx, -vy, -yaw rate), joint terms as the actions)."""

    # ------------------------------------------------------------------------------------ helpers
    def _observation_bound(self, full: tuple[tuple[str, int], ...]) -> torch.Tensor:
        """The bound of each column of the full noise-free observation: scaled speed bounds for the velocities,
        the command ranges, the joint ranges (+ 1 rad: soft limits give), the action clip, the scan clip."""
        s, cfg, b, rb = OBS_SCALES, self.cfg, self.bounds, self.robot
        c = cfg.commands
        cmd = [max(abs(v) for v in c.lin_vel_x) * s["lin_vel"], max(abs(v) for v in c.lin_vel_y) * s["lin_vel"],
               max(abs(v) for v in c.yaw_rate) * s["ang_vel"]]
        joint_pos = []
        for adr, default in zip(rb.joint_qpos_adr, rb.default_joint_pos):
            jnt = int(np.nonzero(self.model.jnt_qposadr == adr)[0][0])
            lo, hi = self.model.jnt_range[jnt]
            limited = bool(self.model.jnt_limited[jnt]) and lo < hi
            joint_pos.append(max(abs(lo - default), abs(hi - default)) + 1.0 if limited else math.inf)
        per_term = {"base_lin_vel": [b.base_lin_vel * s["lin_vel"]] * 3,
                    "base_ang_vel": [b.base_ang_vel * s["ang_vel"]] * 3, "projected_gravity": [1.0] * 3,
                    "commands": cmd, "joint_pos": joint_pos, "joint_vel": [v * s["joint_vel"] for v in b.joint_vel],
                    "last_actions": [cfg.clip_actions] * self.num_joints,
                    "height_scan": [cfg.height_scan.clip * s["height_scan"]] * (full[-1][1] if full[-1][0] == "height_scan" else 0)}
        bound = [v for name, _ in full for v in per_term[name]]
        return torch.tensor(bound, dtype=torch.float32, device=self.device) * (1.0 + 1e-4)

    def _beyond_bounds(self, qvel: torch.Tensor) -> torch.Tensor:
        """``[N]`` bool: the base or a joint moves faster than the robot's speed bounds (NaN: False)."""
        b = self.bounds
        lin = qvel[:, self._base_linvel].norm(dim=1) > b.base_lin_vel
        ang = qvel[:, self._base_angvel].norm(dim=1) > b.base_ang_vel
        return lin | ang | (qvel[:, self._joint_dof].abs() > self._joint_bound).any(dim=1)

    def _needed(self, mask: torch.Tensor) -> bool:
        """Whether masked work must run: on the CPU skip an empty mask (reading it is free); on a GPU always run
        the fixed-shape masked update instead of reading the mask back (a host sync)."""
        return not self._cpu or bool(mask.any())

    def _uniform(self, shape: tuple[int, ...], low: float, high: float) -> torch.Tensor:
        return torch.rand(shape, generator=self.generator, device=self.device) * (high - low) + low

    def kinematics(self, r: PhysicsReadout) -> dict[str, torch.Tensor]:
        """Base velocities and gravity in the body frame, joint states, feet and contact forces (every column
        found by name at build time): what rewards and observations use."""
        quat = r.qpos[:, self._base_quat]
        N = quat.shape[0]
        gravity = torch.zeros(N, 3, device=quat.device)  # filled on the device: a tensor from a list is a host copy
        gravity[:, 2] = -1.0
        sd = r.sensordata
        return {
            "lin_vel_b": rotate_inverse(quat, r.qvel[:, self._base_linvel]),
            "ang_vel_b": r.qvel[:, self._base_angvel],
            "gravity_b": rotate_inverse(quat, gravity),
            "joint_pos": r.qpos[:, self._joint_qpos],
            "joint_vel": r.qvel[:, self._joint_dof],
            "foot_force": sd[:, self._foot_touch],
            "forbidden_force": sd[:, self._term_force],
            "penalized_force": self._per_body(sd[:, self._pen_force]),
            "foot_vel_w": sd[:, self._foot_vel].reshape(N, self.num_feet, 3),
        }

    def _per_body(self, force: torch.Tensor) -> torch.Tensor:
        """Largest contact force per penalized body (a body may have several collision geoms)."""
        if self._pen_bodies is None:
            return force
        nb, index = self._pen_bodies
        out = torch.zeros(force.shape[0], nb, device=force.device, dtype=force.dtype)
        return out.scatter_reduce(1, index.expand(force.shape[0], -1), force, reduce="amax")

    def _observe(self, k: dict[str, torch.Tensor], r: PhysicsReadout, rows: torch.Tensor | None = None) -> Obs:
        """The policy observation (noisy; the scan clipped; without the ``policy_exclude`` terms) and, with a
        separate critic, the critic's; non-finite values replaced by 0 (their world is marked diverged).
        ``rows``: ``k`` and ``r`` hold these envs only (the noise is still drawn for all envs, so the random
        stream and every observed value are those of a full observation)."""
        return self._observed(k, r, rows)[0]

    def _observed(self, k: dict[str, torch.Tensor], r: PhysicsReadout, rows: torch.Tensor | None = None
                  ) -> tuple[Obs, torch.Tensor]:
        """``_observe``, and ``[N]`` bool: the world's observation was non-finite or beyond its bounds."""
        s, cfg = OBS_SCALES, self.cfg

        def own(x: torch.Tensor) -> torch.Tensor:  # task state of the observed envs
            return x if rows is None else x[rows]

        terms = [k["lin_vel_b"] * s["lin_vel"], k["ang_vel_b"] * s["ang_vel"], k["gravity_b"],
                 own(self.commands) * self.cmd_scale, (k["joint_pos"] - self.default_joint_pos) * s["joint_pos"],
                 k["joint_vel"] * s["joint_vel"], own(self.last_actions)]
        if cfg.height_scan.enabled:
            base = r.qpos[:, self._base_pos]
            scan = self.ground.scan(base, yaw_of(r.qpos[:, self._base_quat])) - cfg.height_scan.offset
            terms.append(scan.clamp(-cfg.height_scan.clip, cfg.height_scan.clip) * s["height_scan"])
        exact = torch.cat(terms, dim=1)
        obs = exact
        if cfg.noise.scale > 0:
            shape = (self.num_envs, exact.shape[1])  # (2 u - 1) x noise_vec, in place on the fresh draw
            noise = torch.rand(shape, generator=self.generator, device=self.device).mul_(2.0).sub_(1.0).mul_(self.noise_vec)
            obs = obs + own(noise)
            if cfg.height_scan.enabled:  # the noisy scan stays within the clip (obs is a new tensor here)
                c = cfg.height_scan.clip * s["height_scan"]
                obs[:, -self.ground.scan_points.shape[0]:].clamp_(-c, c)
        if self._policy_columns is not None:  # env.policy_exclude: the policy sees the other terms
            obs = obs.index_select(1, self._policy_columns)
        bad = ~(exact.abs() <= self._obs_bound).all(dim=1) | ~torch.isfinite(obs).all(dim=1)  # NaN fails the <=
        out = {"policy": torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)}
        if self.separate_critic:
            critic = torch.cat([exact, own(self.privileged)], dim=1) if cfg.privileged_critic else exact
            bad = bad | ~torch.isfinite(critic).all(dim=1)
            out["critic"] = torch.nan_to_num(critic, nan=0.0, posinf=0.0, neginf=0.0)
        return out, bad

    def _restarted(self, done: torch.Tensor, final_obs: Obs) -> Obs:
        """``final_obs`` with the rows of the envs just reset replaced by their first observation. On the CPU
        only those rows are observed (reading the mask costs nothing there; the height scan of every env was
        a third of the task logic's time on quadruped-rough); elsewhere all rows, at fixed shapes."""
        r = self.physics.read()
        if self._cpu:
            rows = done.nonzero().squeeze(1)
            sub = PhysicsReadout(r.qpos[rows], r.qvel[rows], r.sensordata[rows], r.actuator_force[rows])
            fresh = self._observe(self.kinematics(sub), sub, rows)
            return {g: final_obs[g].index_copy(0, rows, fresh[g]) for g in final_obs}
        fresh = self._observe(self.kinematics(r), r)
        return {g: torch.where(done.unsqueeze(1), fresh[g], final_obs[g]) for g in final_obs}

    def _sample_commands(self, mask: torch.Tensor) -> None:
        c = self.cfg.commands
        N = self.num_envs
        new = torch.stack([self._uniform((N,), *c.lin_vel_x), self._uniform((N,), *c.lin_vel_y),
                           self._uniform((N,), *c.yaw_rate)], dim=1)
        small = torch.norm(new[:, :2], dim=1) < c.min_lin_vel
        new[:, :2] *= (~small).unsqueeze(1)
        if c.standing_share > 0:  # a config value: no random numbers drawn (and none changed) when it is 0
            new = new * (self._uniform((N,), 0.0, 1.0) >= c.standing_share).unsqueeze(1)
        if self._held is not None:  # drawn all the same: the random stream does not depend on the hold
            new = self._held[0]
        self.commands = torch.where(mask.unsqueeze(1), new, self.commands)
        if c.heading:
            heading = self._uniform((N,), -math.pi, math.pi)
            self.heading = torch.where(mask, heading if self._held is None else self._held[1], self.heading)

    def _steer(self, quat: torch.Tensor) -> None:
        """commands.heading: this step's yaw-rate command from the heading error (legged_gym)."""
        c = self.cfg.commands
        error = torch.remainder(self.heading - yaw_of(quat) + math.pi, 2 * math.pi) - math.pi
        yaw_rate = (c.heading_gain * error).clamp(c.yaw_rate[0], c.yaw_rate[1])
        self.commands = torch.cat([self.commands[:, :2], yaw_rate.unsqueeze(1)], dim=1)

    def _reset_envs(self, mask: torch.Tensor) -> None:
        """Fresh randomized state, model parameters and commands for the masked envs (fixed shapes, no sync)."""
        N, rnd = self.num_envs, self.cfg.randomization
        qpos = self._qpos0.expand(N, -1).clone()
        qpos[:, self._base_pos] = self.ground.start_positions()
        qpos[:, self._base_pos.start + 2] += self.spawn_height
        qpos[:, self._base_quat] = from_yaw(self._uniform((N,), -math.pi, math.pi))
        qpos[:, self._joint_qpos] = self.default_joint_pos * self._uniform((N, self.num_joints), *rnd.init_joint_scale)
        if self.robot.num_held:
            qpos[:, self._held_qpos] = self._held_pos
        qvel = torch.zeros(N, self.model.nv, device=self.device)
        qvel[:, self._base_dofs] = self._uniform((N, 6), -rnd.init_base_vel, rnd.init_base_vel)
        self.physics.reset(mask, qpos, qvel)

        d = self._defaults
        friction = d["geom_friction"].expand(N, -1, -1).clone()
        mu = self._uniform((N, 1), *rnd.friction)
        friction[:, :, 0] = mu
        mass = d["body_mass"].expand(N, -1).clone()
        added = self._uniform((N,), *rnd.added_base_mass)
        mass[:, self.robot.mass_body_id] += added
        gain = self._uniform((N, 1), *rnd.gain_scale)
        drawn = torch.cat([mu, added.unsqueeze(1), gain], dim=1)
        self.privileged = torch.where(mask.unsqueeze(1), drawn, self.privileged)
        gainprm = d["actuator_gainprm"].expand(N, -1, -1).clone()
        gainprm[:, :, 0] *= gain
        biasprm = d["actuator_biasprm"].expand(N, -1, -1).clone()
        biasprm[:, :, 1:3] *= gain.unsqueeze(-1)
        self.physics.set_model_fields(mask, {"geom_friction": friction, "body_mass": mass,
                                             "actuator_gainprm": gainprm, "actuator_biasprm": biasprm})
        self._sample_commands(mask)
        # Out of place: some of these alias the physics readout (a DLPack view of a JAX array on MJX).
        keep = (~mask).unsqueeze(1)
        self.episode_length = self.episode_length * ~mask
        self.last_actions = self.last_actions * keep
        # values read from a diverged state can be NaN, and NaN * 0 is NaN: a reset world would carry it into its
        # next episode (a NaN reward; success never reached again)
        self.last_joint_vel = torch.nan_to_num(self.last_joint_vel) * keep
        self.air_time = self.air_time * keep
        self.contact_time = self.contact_time * keep
        self.last_contacts = self.last_contacts & keep
        self.max_travelled = torch.nan_to_num(self.max_travelled) * ~mask

    def hold_commands(self, commands: torch.Tensor | None, heading: torch.Tensor | None = None) -> None:
        """Interactive play (``play.py --web``): from now on every env tracks ``commands`` ``[N, 3]`` (and, with
        ``commands.heading``, steers towards ``heading`` ``[N]`` rad), through resampling and resets; None: random
        commands again. The observation shows them from the next step on."""
        if commands is None:
            self._held = None
            return
        held = commands.to(self.device, torch.float32)
        self._held = (held, self.heading if heading is None else heading.to(self.device, torch.float32))
        self.commands = held.clone()
        self.heading = self._held[1].clone()

    # ----------------------------------------------------------------------------------- VecEnv API
    def reset(self, seed: int | None = None) -> Obs:
        with single_threaded(self._cpu):
            return self._reset(seed)

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        if self._graphed is not None:
            return self._graphed(actions)
        with single_threaded(self._cpu):
            return self._step(actions)

    def _reset(self, seed: int | None) -> Obs:
        if seed is not None:
            self.generator.manual_seed(seed)
        self.ground.draw_levels()
        self._reset_envs(self._all)
        if self.cfg.randomize_initial_episode_length:
            self.episode_length = torch.randint(0, self.max_episode_length, (self.num_envs,), generator=self.generator,
                                                device=self.device)
        r = self.physics.read()
        return self._observe(self.kinematics(r), r)

    def _step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        return self._finish_step(self._act(actions))

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
        """Everything after the physics: observations, rewards, terminations, resets (torch only)."""
        cfg = self.cfg
        r = self.physics.read()
        k = self.kinematics(r)
        self.episode_length += 1
        base_xy = r.qpos[:, self._base_pos.start:self._base_pos.start + 2]
        base_height = r.qpos[:, self._base_pos.start + 2] - self.ground.height(base_xy)  # above the ground below
        if cfg.commands.heading:
            self._steer(r.qpos[:, self._base_quat])

        thr = cfg.contact_force_threshold
        contact = k["foot_force"] > thr
        contact_filt = contact | self.last_contacts
        first_contact = (self.air_time > 0) & contact_filt
        self.air_time += self.dt
        self.contact_time = (self.contact_time + self.dt) * contact
        N = self.num_envs
        tau = r.actuator_force if self._torque_order is None else r.actuator_force[:, self._torque_order]
        inputs = R.RewardInputs(
            commands=self.commands, lin_vel_b=k["lin_vel_b"], ang_vel_b=k["ang_vel_b"], gravity_b=k["gravity_b"],
            torques=tau if self.robot.num_held else r.actuator_force,  # held joints' servos are not the policy's
            joint_vel=k["joint_vel"], last_joint_vel=self.last_joint_vel, actions=actions,
            last_actions=self.last_actions, air_time=self.air_time, first_contact=first_contact,
            foot_vel_w=k["foot_vel_w"], foot_contact=contact, penalized_contact=k["penalized_force"] > thr,
            contact_time=self.contact_time, foot_pos_w=r.sensordata[:, self._foot_pos].reshape(N, self.num_feet, 3),
            base_quat=r.qpos[:, self._base_quat], base_height=base_height,
            joint_offset=(k["joint_pos"] - self.default_joint_pos)[:, self._deviation], joint_torques=tau,
            left_feet=self._left_feet, right_feet=self._right_feet,
            dt=self.dt, sigma=cfg.rewards.tracking_sigma, params=cfg.reward_params)
        terms = {name: w * R.TERMS[name](inputs) for name, w in self.reward_terms.items()}
        self.air_time *= ~contact_filt
        self.last_contacts = contact
        stacked = torch.stack(list(terms.values()))  # [terms, N]
        reward = stacked.sum(0)
        if cfg.rewards.only_positive:
            reward = reward.clamp(min=0.0)

        # Diverged: a non-finite state, a speed beyond MAX_SANE_QVEL or the robot's bounds, a non-finite reward, a
        # backend's own alarm; below also a non-finite or out-of-bounds observation. Reset, not learned from.
        finite = torch.isfinite(r.qpos).all(1) & torch.isfinite(r.qvel).all(1)
        diverged = ~finite | (r.qvel.abs() > MAX_SANE_QVEL).any(1) | self._beyond_bounds(r.qvel)
        diverged |= ~torch.isfinite(reward)
        if r.unstable is not None:
            diverged |= r.unstable.to(self.device)
        if cfg.collisions == "feet":  # nothing but the feet touches the floor: judge the torso's pose
            fell = (k["gravity_b"][:, 2] > -self._cos_fall_tilt) | (base_height < cfg.fall_height)
        else:
            fell = (k["forbidden_force"] > thr).any(1)
            if cfg.min_base_height > 0:
                fell = fell | (base_height < cfg.min_base_height)
        terminated = fell | diverged
        # a time-out, or a robot about to walk off the generated terrain's edge (bootstrapped like a time-out)
        truncated = ((self.episode_length >= self.max_episode_length) | self.ground.outside(base_xy)) & ~terminated

        lin_err = torch.norm(self.commands[:, :2] - k["lin_vel_b"][:, :2], dim=1)
        yaw_err = torch.abs(self.commands[:, 2] - k["ang_vel_b"][:, 2])
        self.last_actions = actions
        self.last_joint_vel = k["joint_vel"]
        done = terminated | truncated
        commands = self.commands  # the ones this step tracked (resampling and resets replace the tensor)
        self._sample_commands((self.episode_length % self.resample_steps == 0) & ~done)
        # The observation of the state after this step; for done envs it is the final one of their episode.
        final_obs, bad_obs = self._observed(k, r)
        late = bad_obs & ~diverged  # diverged in its observation only: ends here too
        diverged = diverged | bad_obs
        terminated, truncated, done = terminated | late, truncated & ~late, done | late
        reward = torch.where(diverged, torch.zeros_like(reward), torch.nan_to_num(reward))
        valid = ~diverged
        self.max_travelled = torch.maximum(self.max_travelled, self.ground.travelled(base_xy))
        success = (self.max_travelled >= cfg.success_distance).float()
        # of the episodes that end here; a diverged one has none (it never counts as a success)
        ended = torch.where(done & valid, success, torch.full_like(success, math.nan))
        if self.push_steps:  # takes effect during the next step
            push = (self.episode_length % self.push_steps == 0) & ~done
            if self._needed(push):
                qvel = r.qvel.clone()
                qvel[:, self._base_linvel.start:self._base_linvel.start + 2] = self._uniform((self.num_envs, 2), -cfg.randomization.push_vel_xy,
                                            cfg.randomization.push_vel_xy)
                self.physics.set_velocity(push, qvel)
        obs = final_obs
        if self._needed(done):
            self.ground.update_levels(done & valid, base_xy, commands, cfg.episode_length_s)  # not by a flight
            self._reset_envs(done)
            obs = self._restarted(done, final_obs)

        # Means over the worlds that did not diverge (a diverged world's terms can be huge or NaN)
        w = valid.float()
        n = w.sum().clamp(min=1.0)
        means = torch.where(valid, stacked, torch.zeros_like(stacked)).sum(1) / n  # one reduction, not one per term
        log = dict(zip((f"rew_{name}" for name in terms), means.unbind()))
        errors = torch.where(valid, torch.stack([lin_err, yaw_err, terminated.float(), truncated.float()]), 0.0).sum(1) / n
        log.update(lin_vel_error=errors[0], yaw_rate_error=errors[1], terminated=errors[2], truncated=errors[3],
                   diverged=diverged.float().mean())
        if self.terrain is not None:
            log["terrain_level"] = self.ground.mean_level()
        info: StepInfo = {
            "final_obs": final_obs if self._needed(truncated) else None, "log": log, "invalid": diverged,
            "episode_stats": {"success": ended},
            # Per foot, 1 while it is off the ground: its evaluated mean is the foot's swing (air) fraction.
            "metrics": {"lin_vel_tracking_error": lin_err, "yaw_rate_tracking_error": yaw_err,
                        **{f"swing_{name}": swing for name, swing in zip(self._swing_names, (~contact).float().unbind(1))},
                        **self._duty_difference(contact)},
            "breakdown": {name: commands[:, j] for j, name in enumerate(COMMANDS)}}
        return obs, reward, terminated, truncated, info

    def _duty_difference(self, contact: torch.Tensor) -> dict[str, torch.Tensor]:
        """``duty_factor_difference``: left minus right foot on the ground, averaged over the side pairs; its
        evaluated mean is the difference of the left and right feet's duty factors (0 for a symmetric gait)."""
        if self._side_feet is None:
            return {}
        left, right = self._side_feet
        on = contact.float()
        return {"duty_factor_difference": (on.index_select(1, left) - on.index_select(1, right)).mean(1)}

    def close(self) -> None:
        pass

    def render_model(self, index: int) -> mujoco.MjModel:
        """The model to film env ``index`` with from now on: on a generated terrain the same scene with only the
        floor within ``RENDER_WINDOW_TILES`` tiles of the robot's base (the full heightfield costs a software
        renderer seconds per frame); on a plane the simulated model."""
        if self.terrain is None:
            return self.model
        cfg = self.cfg
        x, y = self.physics.read().qpos[index, self._base_pos.start:self._base_pos.start + 2].tolist()
        window = (x, y, RENDER_WINDOW_TILES * self.terrain.tile_size)
        return build(self.robot.spec, cfg.collisions, cfg.solver_iterations, cfg.ls_iterations, self.terrain,
                     window).model

    def export_metadata(self) -> dict[str, Any]:
        """What a deployment needs to rebuild the observation and apply the action (stored in exported policies).

        Observation term ``name`` is ``(value - offset) * scale`` with the offset ``default_joint_pos`` for
        ``joint_pos`` and 0 otherwise; ``commands`` are (vx, vy, yaw rate). Actions become joint targets
        ``default_joint_pos + action_scale * clip(action, -action_clip, action_clip)`` (per joint) for position
        servos with gains ``kp`` / ``kd``, sent every ``control_dt`` seconds; the ``held_joint_names`` are held
        at ``held_joint_pos`` by their own servos. The schema and its version (``format``, major 2 since
        per-joint ``action_scale`` and held joints): ``deploy/schema.py``.
        """
        s, cfg, rb = OBS_SCALES, self.cfg, self.robot
        # sim2sim simulates every collision: the scene is rebuilt with collisions=full if training used feet only
        scene = rb if cfg.collisions == "full" else build(rb.spec, "full", cfg.solver_iterations, cfg.ls_iterations,
                                                          self.terrain)
        return {
            "robot": rb.spec.name,
            "scene_mjb": scene_bytes(scene.model),
            "base_joint": rb.base_joint,
            "foot_names": list(rb.foot_names),
            "obs_layout": [list(item) for item in self.obs_layout],
            "obs_scales": {"base_lin_vel": s["lin_vel"], "base_ang_vel": s["ang_vel"], "projected_gravity": 1.0,
                           "commands": self.cmd_scale.tolist(), "joint_pos": s["joint_pos"],
                           "joint_vel": s["joint_vel"], "last_actions": 1.0,
                           **({"height_scan": s["height_scan"]} if cfg.height_scan.enabled else {})},
            "joint_names": list(rb.joint_names),
            "default_joint_pos": list(rb.default_joint_pos),
            "joint_pos_limits": self._joint_ranges(),
            "action_scale": list(rb.action_scale),
            "velocity_limits": [v if math.isfinite(v) else None for v in rb.velocity_limit],
            "held_joint_names": list(rb.held_joint_names),
            "held_joint_pos": list(rb.held_joint_pos),
            "action_clip": cfg.clip_actions,
            "kp": list(rb.kp),
            "kd": list(rb.kd),
            "torque_limits": [None if math.isinf(x) else x for x in rb.effort_limit],
            "control_dt": self.dt,
            "sim_dt": self.model.opt.timestep,
            "decimation": cfg.decimation,
            "base_height": rb.spec.base_height,
            "episode_length_s": cfg.episode_length_s,
            "command_ranges": {name: list(getattr(cfg.commands, name)) for name in COMMANDS},
            "command_resample_s": cfg.commands.resample_s,
            "command_min_lin_vel": cfg.commands.min_lin_vel,
            "collisions": cfg.collisions,  # what the policy was trained with (sim2sim simulates every collision)
            "termination_contact_sensors": list(scene.termination_sensors),
            "contact_force_threshold": cfg.contact_force_threshold,
            "success_distance": cfg.success_distance,
            **self._terrain_metadata(),
        }

    def _joint_ranges(self) -> list[list[float | None]]:
        """``[low, high]`` (rad) of each actuated joint in policy order; ``[None, None]`` for an unlimited one."""
        out: list[list[float | None]] = []
        for name in self.robot.joint_names:
            j = self.model.joint(name)
            out.append([float(j.range[0]), float(j.range[1])] if self.model.jnt_limited[j.id] else [None, None])
        return out

    def _terrain_metadata(self) -> dict[str, Any]:
        """The height scan's grid (``height_scan``: points, extents, offset, clip; the scan observation is
        ``clip(base z - ground z at each point - offset)``, points in the base's yaw frame) and the generated
        terrain's tiles (``terrain``: its config, tile size, each column's type and each tile's start point
        ``origins [levels][columns][x, y, z]``); the heights themselves are the scene's heightfield."""
        out: dict[str, Any] = {}
        scan = self.cfg.height_scan
        if scan.enabled:
            out["height_scan"] = {"points_x": scan.points_x, "points_y": scan.points_y, "size_x": scan.size_x,
                                  "size_y": scan.size_y, "offset": scan.offset, "clip": scan.clip}
        if self.terrain is not None:
            t = self.terrain
            out["terrain"] = {"config": asdict(self.cfg.terrain), "tile_size": t.tile_size, "levels": t.levels,
                              "columns": t.columns, "column_types": list(t.column_types),
                              "origins": t.origins.astype(float).tolist()}
        return out

    # ----------------------------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict[str, Any]:
        task = {name: getattr(self, name).cpu() for name in _TASK_STATE}
        task["terrain_levels"] = self.ground.levels.cpu()
        return {"physics": self.physics.state_dict(), "task": task, "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.physics.load_state_dict(state["physics"])
        for name in _TASK_STATE:
            if name in state["task"]:  # contact_time is newer than some checkpoints: it then starts at zero
                setattr(self, name, state["task"][name].to(self.device))
        if "terrain_levels" in state["task"]:
            self.ground.levels.copy_(state["task"]["terrain_levels"])
        self.generator.set_state(state["generator"])


_TASK_STATE = ("commands", "episode_length", "last_actions", "last_joint_vel", "air_time", "contact_time",
               "last_contacts", "max_travelled", "privileged", "heading")
PRIVILEGED_TERMS = ("friction", "added_base_mass", "gain_scale")
"""What the privileged critic sees beyond the policy's (noise-free) terms, in order."""


def _reward_weights(cfg: LocomotionEnvConfig) -> dict[str, float]:
    """The weight of every reward term: the float fields of RewardScales but the kernel width."""
    r = cfg.rewards
    return {f.name: getattr(r, f.name) for f in fields(r) if f.type in (float, "float") and f.name != "tracking_sigma"}
