"""Motion tracking: a robot reproduces motion clips, every joint trained (a task family on ``MujocoTask``).

The robot is a ``RobotSpec`` with every joint its clips name trained (``robot.py``); the clips are read,
matched by joint name and resampled to the control rate (``clips.py``), replayed in the scene for the reference's
body poses and velocities (``library.py``). Env ``i`` plays clip ``i % len(clips)``. ``MujocoTask`` owns the
physics, the random stream, the task state, checkpoints and the step's recipe; this class supplies its hooks:

    state.py          the per-env task state, declared once (the frame of the clip)
    view.py           the robot's quantities of a readout (the tracked bodies by torch forward kinematics)
    errors.py         how far the robot is from the reference (anchor-relative body errors)
    observations.py   the observation table and each term's value
    rewards.py        the reward terms, each exp(-error / sigma) of a named error (and the action rate)
    sampling.py       start frames drawn where the policy fails most
    export.py         the exported policy's metadata (the clips travel in it)

An episode starts at a drawn frame in the reference's state (plus a little noise), advances one frame per step,
fails (terminated) when the anchor's height or tilt leaves its band, and ends as a time-out (truncated,
bootstrapped) at ``episode_length_s`` or at the clip's last frame. Divergence is the base's shared test with the
robot's speed bounds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
import torch

from contract.errors import UserError
from envs.motion.kinematics import TreeKinematics
from envs.physics.base import PhysicsReadout
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.tasks import bounds as speed
from envs.tasks.base import MujocoTask
from envs.tasks.hook_parts import hook_parts
from envs.tasks.locomotion.terminations import MAX_SANE_QVEL
from envs.tasks.observations import ObservationLayout
from envs.tasks.reward_terms import weights_of
from envs.tasks.rotations import from_yaw
from envs.tasks.track import export, observations, rewards
from envs.tasks.track.clips import load_clips
from envs.tasks.track.config import TrackEnvConfig
from envs.tasks.track.errors import Errors, tracking_errors
from envs.tasks.track.library import MotionLibrary
from envs.tasks.track.robot import anchor_for, tracking_robot
from envs.tasks.track.sampling import StartSampler
from envs.tasks.track.state import TrackState
from envs.tasks.track.view import Columns, View
from rl_core.env_api import ActionSpec, Obs

OBS_LIMIT = 1e4
"""A noise-free observation value beyond this (or not finite) means the world has diverged."""


@dataclass(frozen=True)
class Measured:
    """What the hooks of one tracking step share."""

    v: View
    e: Errors
    failed: torch.Tensor
    """``[N]`` bool: the anchor left its height or tilt band."""


class TrackEnv(MujocoTask[TrackState]):
    """``cfg.num_envs`` copies of ``robot`` tracking ``cfg.clips``; satisfies ``rl_core.env_api.VecEnv``."""

    cfg: TrackEnvConfig
    """The task's config."""
    headline_metrics = (("joint_pos_error", "q_err"), ("anchor_pos_error", "anchor_err"))
    """The console line's metrics (``rl_core.env_api.Headlined``): joint-angle (rad) and anchor-position (m) errors."""

    def __init__(self, cfg: TrackEnvConfig, robot: RobotSpec, device: torch.device | str = "cpu"):
        self.cfg = cfg
        self.robot: ResolvedRobot = tracking_robot(robot, cfg)
        rb = self.robot
        J = self.num_joints = rb.num_joints
        super().__init__(cfg, rb.model, (), TrackState, {"joints": J}, device)
        self.camera, self.track_body = rb.camera, rb.base_body_id
        self.resample_steps = 1  # nothing is resampled within an episode (the recipe asks every step)
        self.played = load_clips(cfg.clips, rb, 1.0 / self.dt, cfg.csv_fps, cfg.check_clips)
        """The run's clips (their source, hash and the clip at the control rate)."""
        body_ids, anchor = self._tracked_bodies()
        self.body_ids = body_ids
        """The tracked bodies (model ids; the anchor among them)."""
        self.library = MotionLibrary([p.clip for p in self.played], rb, body_ids, self.num_envs, self.device)
        self.fk = TreeKinematics(rb.model, body_ids, self.device)
        self.columns = Columns(rb.base_qpos_adr, rb.base_dof_adr, torch.tensor(rb.joint_qpos_adr, device=self.device),
                               torch.tensor(rb.joint_dof_adr, device=self.device), anchor)
        self.sampler = StartSampler(cfg.start, self.library.lengths, self.dt, self.library.env_clip, self._uniform)
        self._setup_actions()
        sizes = {"joints": J, "motion_joints": cfg.future_frames * J}
        self.obs = ObservationLayout(observations.TABLE, sizes, (), cfg, cfg.noise.scale, self.device)
        self.obs_layout = self.obs.policy
        """The policy's observation terms in order, ``(name, size)`` (exported for deployment)."""
        self.obs_dims = {"policy": self.obs.full_dim}
        self._set_rewards(rewards.TERMS, reward_weights(cfg))
        self.bounds = speed.speed_bounds(self.model, rb.joint_dof_adr, rb.spec.base_height, 0.0,
                                         cfg.speed_bound_margin)
        self._joint_bound = torch.tensor(self.bounds.joint_vel, device=self.device)
        self._ahead = torch.arange(1, cfg.future_frames + 1, device=self.device)
        self.parts = hook_parts(self)

    # ------------------------------------------------------------------------------------ set-up
    def _tracked_bodies(self) -> tuple[tuple[int, ...], int]:
        """The robot's bodies the body terms track (``env.bodies``, model order) with the anchor among them, and
        the anchor's index; one line for a regex or anchor that names no body of the robot."""
        m, rb = self.model, self.robot
        robot = [b for b in range(1, m.nbody) if _root_of(m, b) == _root_of(m, rb.base_body_id)]
        names = [m.body(b).name for b in robot]
        picked: list[int] = []
        for pattern in self.cfg.bodies:
            hit = [b for b, n in zip(robot, names, strict=True) if re.fullmatch(pattern, n)]
            if not hit:
                raise UserError(f"config error: env.bodies entry {pattern!r} matches no body of robot "
                                f"{rb.spec.name}; its bodies: {', '.join(names)}")
            picked += [b for b in hit if b not in picked]
        anchor_name = anchor_for(self.cfg, rb, names)
        if anchor_name not in names:
            raise UserError(f"config error: env.anchor_body={anchor_name!r} is not a body of robot {rb.spec.name}; "
                            f"its bodies: {', '.join(names)}")
        anchor = robot[names.index(anchor_name)]
        ids = tuple(sorted(set(picked) | {anchor}))
        return ids, ids.index(anchor)

    def _setup_actions(self) -> None:
        rb, dev = self.robot, self.device
        self.action_spec = ActionSpec(discrete=False, n=self.num_joints)
        self.default_joint_pos = torch.tensor(rb.default_joint_pos, device=dev, dtype=torch.float32)
        scales = rb.action_scale
        self.action_scale = (scales[0] if len(set(scales)) == 1 else
                             torch.tensor(scales, device=dev, dtype=torch.float32))
        identity = rb.ctrl_from_policy == tuple(range(self.num_joints))
        self.ctrl_order = None if identity else torch.tensor(rb.ctrl_from_policy, dtype=torch.long, device=dev)
        ranges = rb.joint_range
        self._low = torch.tensor([-math.inf if lo is None else lo for lo, _ in ranges], device=dev)
        self._high = torch.tensor([math.inf if hi is None else hi for _, hi in ranges], device=dev)

    # ------------------------------------------------------------------------------------ the step's hooks
    def _view(self, r: PhysicsReadout) -> View:
        return View(r, self.fk, self.columns)

    def _measure(self, v: View, actions: torch.Tensor) -> Measured:
        """One frame further along the clip; the robot's errors against it."""
        state, cfg = self.state, self.cfg
        state.frame = state.frame + 1
        e = tracking_errors(v.poses, v.joint_pos, self.library.at(state.frame), self.columns.anchor)
        return Measured(v, e, (e.height_gap > cfg.anchor_height_band) | (e.tilt_gap > cfg.anchor_tilt_band))

    def _reward_context(self, q: Measured, actions: torch.Tensor) -> rewards.Context:
        return rewards.Context(q.e, actions, self.state.last_actions, self.cfg.reward_params)

    def _too_fast(self, qvel: torch.Tensor) -> torch.Tensor:
        """Beyond ``MAX_SANE_QVEL``, a joint's or the base's speed bound, or not finite (NaN fails the ``<=``)."""
        b, d = self.bounds, self.robot.base_dof_adr
        joints = qvel[:, self.columns.joint_dof]
        sane = (qvel.abs() <= MAX_SANE_QVEL).all(1) & (joints.abs() <= self._joint_bound).all(1)
        out = ~sane | (qvel[:, d:d + 3].norm(dim=1) > b.base_lin_vel)
        return out | (qvel[:, d + 3:d + 6].norm(dim=1) > b.base_ang_vel)

    def _failed(self, q: Measured) -> torch.Tensor:
        return q.failed

    def _cut(self, q: Measured) -> torch.Tensor:
        """The clip's last frame is reached (bootstrapped like a time-out)."""
        return self.state.frame >= self.library.env_last

    def _after_rewards(self, q: Measured, actions: torch.Tensor) -> None:
        self.state.last_actions = actions
        self.sampler.advance()

    def _observe(self, v: View, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        state, lib = self.state, self.library
        frame = state.frame if rows is None else state.frame[rows]
        idx = lib.rows(frame.unsqueeze(1) + self._ahead, rows)  # [n, K]: the next frames
        nxt, a = idx[:, 0], self.columns.anchor
        view = observations.Ahead(lib.joint_pos[idx], lib.joint_vel[idx], lib.body_pos[nxt, a], lib.body_rot[nxt, a],
                                  lib.phase(frame, rows))
        last = state.last_actions if rows is None else state.last_actions[rows]
        exact = self.obs.exact(observations.values(v.robot(), view, self.default_joint_pos, last))
        obs = self.obs.noisy(exact, self.generator, self.num_envs, rows)
        bad = ~(exact.abs() <= OBS_LIMIT).all(dim=1) | ~torch.isfinite(obs).all(dim=1) if check else None
        return {"policy": torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)}, bad

    def _episode_stats(self, q: Measured, ended: torch.Tensor) -> dict[str, torch.Tensor]:
        """``clip_end``: the episode reached its clip's last frame."""
        end = (self.state.frame >= self.library.env_last).float()
        return {"clip_end": torch.where(ended, end, torch.full_like(end, math.nan))}

    def _episodes_end(self, q: Measured, ended: torch.Tensor) -> None:
        self.sampler.record(ended & q.failed, self.state.frame)

    def _measures(self, q: Measured) -> dict[str, torch.Tensor]:
        return self._metrics(q)

    def _metrics(self, q: Measured) -> dict[str, torch.Tensor]:
        e = q.e
        return {"joint_pos_error": e.joint_pos_abs, "anchor_pos_error": e.anchor_dist,
                "anchor_ori_error": e.anchor_angle, "body_pos_error": e.body_dist}

    def _info(self, q: Measured) -> dict[str, Any]:
        return {"log": {"start_entropy": self.sampler.entropy()}}

    # ------------------------------------------------------------------------------------ resets
    def reset_envs(self, mask: torch.Tensor) -> None:
        """The masked envs start at a drawn frame of their clip in the reference's state, with the start noise
        (fixed shapes, no sync)."""
        state, lib, s, n = self.state, self.library, self.cfg.start, self.num_envs
        frame = torch.where(mask, self.sampler.sample(n), state.frame)
        rows = lib.rows(frame)
        qpos, qvel = lib.qpos[rows].clone(), lib.qvel[rows].clone()
        b, d = self.robot.base_qpos_adr, self.robot.base_dof_adr
        qpos[:, b:b + 2] += self._uniform((n, 2), -s.base_xy, s.base_xy)
        turn = from_yaw(self._uniform((n,), -s.base_yaw, s.base_yaw))
        qpos[:, b + 3:b + 7] = _quat_mul(turn, qpos[:, b + 3:b + 7])
        c, si = turn[:, 0:1] ** 2 - turn[:, 3:4] ** 2, 2 * turn[:, 0:1] * turn[:, 3:4]  # cos, sin of the yaw offset
        vx, vy = qvel[:, d:d + 1].clone(), qvel[:, d + 1:d + 2].clone()
        qvel[:, d:d + 1], qvel[:, d + 1:d + 2] = c * vx - si * vy, si * vx + c * vy
        joints = qpos[:, self.columns.joint_qpos] + self._uniform((n, self.num_joints), -s.joint_pos, s.joint_pos)
        qpos[:, self.columns.joint_qpos] = torch.maximum(torch.minimum(joints, self._high), self._low)
        self.physics.reset(mask, qpos, qvel)
        state.frame = frame
        state.clear(mask)

    # ------------------------------------------------------------------------------------ views
    def reference_qpos(self, index: int) -> np.ndarray:
        """The reference's generalized positions at env ``index``'s current frame (a video's ghost)."""
        row = self.library.rows(self.state.frame[index:index + 1], torch.tensor([index], device=self.device))
        return self.library.qpos[row][0].double().cpu().numpy()

    def caption(self, index: int) -> str:
        """Env ``index``'s clip, frame and how far it is from the reference."""
        frame, last = int(self.state.frame[index]), int(self.library.env_last[index])
        clip = self.played[int(self.library.env_clip[index])].clip
        v = self._view(self.physics.read())
        rows = torch.tensor([index], device=self.device)
        e = tracking_errors(_pick(v.poses, index), v.joint_pos[index:index + 1],
                            self.library.at(self.state.frame[index:index + 1], rows), self.columns.anchor)
        return (f"clip {clip.name}  frame {frame}/{last}\n"
                f"joint error {float(e.joint_pos_abs[0]):.3f} rad  anchor error {float(e.anchor_dist[0]):.3f} m")

    def export_metadata(self) -> dict[str, Any]:
        """What a deployment needs (``export.py``; the schema: ``contract/schema.py``)."""
        return export.metadata(self.cfg, self.robot, self.obs, self.dt, self.played,
                               self.model.body(self.body_ids[self.columns.anchor]).name)

    def _extra_state(self) -> dict[str, torch.Tensor]:
        return {"start_failures": self.sampler.failures.cpu().clone(),
                "start_current": self.sampler.current.cpu().clone()}

    def _load_extra_state(self, task: dict[str, torch.Tensor]) -> None:
        if "start_failures" in task:
            self.sampler.failures.copy_(task["start_failures"])
            self.sampler.current.copy_(task["start_current"])


def reward_weights(cfg: TrackEnvConfig) -> dict[str, float]:
    """The weight of every reward term: the fields of ``TrackRewardScales``."""
    return weights_of(cfg.rewards)


def _root_of(model: mujoco.MjModel, body: int) -> int:
    while int(model.body_parentid[body]) > 0:
        body = int(model.body_parentid[body])
    return body


def _pick(p: Any, index: int) -> Any:
    return type(p)(*(x[index:index + 1] for x in (p.pos, p.rot, p.lin_vel, p.ang_vel)))


def _quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton products ``[N, 4]`` (w x y z)."""
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                        aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], dim=-1)
