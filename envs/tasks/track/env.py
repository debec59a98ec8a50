"""Motion tracking: a robot reproduces motion clips, every joint trained (a task family on ``MujocoTask``).

The robot is a ``RobotSpec`` with every joint its clips name trained (``robot.py``); the clips are read,
matched by joint name and resampled to the control rate (``clips.py``), replayed in the scene for the reference's
body poses and velocities (``library.py``). Env ``i`` plays clip ``i % len(clips)``. ``MujocoTask`` owns the
physics, the random stream, the task state, checkpoints and the step's recipe; this class assembles the recipe's
parts (``envs/tasks/parts.py``) from the job modules and gives the views play.py reads:

    state.py          the per-env task state, declared once (the frame of the clip)
    view.py           the robot's quantities of a readout (the tracked bodies by torch forward kinematics)
    step.py           the step's quantities (a frame further, the errors), reward context, speed bounds, ends
    errors.py         how far the robot is from the reference (anchor-relative body errors)
    observations.py   the observation table and each term's value
    observer.py       the observation of a view (the reference's next frames) and its validity check
    rewards.py        the reward terms, each exp(-error / sigma) of a named error (and the action rate)
    sampling.py       start frames drawn where the policy fails most
    resets.py         a reset env's drawn frame and start noise; failures told to the sampler
    metrics.py        the errors logged and averaged, each episode's clip end, the sampler's entropy
    export.py         the exported policy's metadata (the clips travel in it)

An episode starts at a drawn frame in the reference's state (plus a little noise), advances one frame per step,
fails (terminated) when the anchor's height or tilt leaves its band, and ends as a time-out (truncated,
bootstrapped) at ``episode_length_s`` or at the clip's last frame. Divergence is the base's shared test with the
robot's speed bounds.
"""

from __future__ import annotations

import math
import re
from typing import Any

import mujoco
import numpy as np
import torch

from contract.errors import UserError
from envs.motion.kinematics import TreeKinematics
from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.tasks import bounds as speed
from envs.tasks.base import MujocoTask
from envs.tasks.observations import ObservationLayout
from envs.tasks.parts import Events, TaskParts, Termination, nothing
from envs.tasks.reward_terms import weights_of
from envs.tasks.track import export, observations, rewards
from envs.tasks.track.clips import load_clips
from envs.tasks.track.config import TrackEnvConfig
from envs.tasks.track.errors import tracking_errors
from envs.tasks.track.library import MotionLibrary
from envs.tasks.track.metrics import report
from envs.tasks.track.observer import Observer
from envs.tasks.track.resets import Resets
from envs.tasks.track.robot import anchor_for, tracking_robot
from envs.tasks.track.sampling import StartSampler
from envs.tasks.track.state import TrackState
from envs.tasks.track.step import Measure, Measured, TooFast, failed
from envs.tasks.track.view import Columns, View
from rl_core.env_api import ActionSpec


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
        self.parts: TaskParts[View, Measured] = self._assemble()

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

    def _assemble(self) -> TaskParts[View, Measured]:
        """The step's parts from the job modules."""
        cfg, state, lib, c = self.cfg, self.state, self.library, self.columns
        measure = Measure(cfg, state, lib, self.fk, c, self.sampler)
        resets = Resets(cfg.start, self.physics, state, lib, self.sampler, c, (self._low, self._high), self._uniform)
        observe = Observer(self.obs, state, lib, c.anchor, cfg.future_frames, self.default_joint_pos, self.generator,
                           self.num_envs)
        ends = (Termination("anchor_band", "fail", failed), Termination("clip_end", "cut", measure.clip_end))
        return TaskParts(view=measure.view, measure=measure.measure, reward_context=measure.reward_context,
                         too_fast=TooFast(self.bounds, c.base_dof, c.joint_dof, self.device), terminations=ends,
                         resample=nothing, observe=observe,
                         events=Events(reset=resets.reset, after_step=measure.after_step,
                                       episode_end=resets.episode_end),
                         report=report(state, lib, self.sampler))

    # ------------------------------------------------------------------------------------ views
    def reference_qpos(self, index: int) -> np.ndarray:
        """The reference's generalized positions at env ``index``'s current frame (a video's ghost)."""
        row = self.library.rows(self.state.frame[index:index + 1], torch.tensor([index], device=self.device))
        return self.library.qpos[row][0].double().cpu().numpy()

    def caption(self, index: int) -> str:
        """Env ``index``'s clip, frame and how far it is from the reference."""
        frame, last = int(self.state.frame[index]), int(self.library.env_last[index])
        clip = self.played[int(self.library.env_clip[index])].clip
        v = self.parts.view(self.physics.read())
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

