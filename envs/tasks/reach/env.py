"""Reaching: a fixed-base arm moves its fingertip to random targets (a second task family on ``MujocoTask``).

The arm is data (``arm.py``: names resolved once against ``arm.xml``). ``MujocoTask`` (``envs/tasks/base.py``)
owns the physics, the random stream, the task state, checkpoints and the step's recipe; this class assembles the
recipe's parts (``envs/tasks/parts.py``) from the job modules and gives the views play.py reads:

    state.py          the per-env task state, declared once
    step.py           the step's view (the fingertip), quantities, reward context and speed bound
    targets.py        targets drawn in the workspace at resets and every ``targets.resample_s``
    resets.py         a reset env's pose and target; the targets' resampling
    kinematics.py     the fingertip's position from the joint angles (valid right after a reset too)
    observations.py   the observation table, each term's value and the observation of a view
    rewards.py        the reward terms, each a small function of the step's ``Context``
    metrics.py        the distance logged and averaged, each episode's success and final distance
    export.py         the exported policy's metadata

Episodes end by their time-out (truncated, bootstrapped) or by divergence (non-finite state or observation,
a joint faster than ``max_joint_vel``: terminated, ``invalid``, reward zeroed, never a success).
"""

from __future__ import annotations

import copy
from typing import Any

import mujoco
import numpy as np
import torch

from envs.tasks.base import MujocoTask, columns
from envs.tasks.observations import ObservationLayout
from envs.tasks.parts import Events, TaskParts
from envs.tasks.reach import export, metrics, observations, rewards
from envs.tasks.reach.arm import ARM, ArmSpec, ResolvedArm, resolve
from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.kinematics import SiteKinematics
from envs.tasks.reach.resets import Resets
from envs.tasks.reach.state import ReachState
from envs.tasks.reach.step import Measure, Measured, View
from envs.tasks.reach.targets import Targets
from envs.tasks.reward_terms import weights_of
from rl_core.env_api import ActionSpec


class ReachEnv(MujocoTask[ReachState]):
    """``cfg.num_envs`` arms reaching random targets; satisfies ``rl_core.env_api.VecEnv``."""

    cfg: ReachEnvConfig
    """The task's config."""
    headline_metrics = (("distance", "dist"),)
    """The console line's metric (``rl_core.env_api.Headlined``): the hand's distance to its target (m)."""

    def __init__(self, cfg: ReachEnvConfig, device: torch.device | str = "cpu", arm: ArmSpec = ARM):
        self.cfg = cfg
        self.arm: ResolvedArm = resolve(arm)
        J = self.num_joints = self.arm.num_joints
        super().__init__(cfg, self.arm.model, (), ReachState, {"joints": J}, device)
        self.camera = arm.camera
        self.resample_steps = max(1, round(cfg.targets.resample_s / self.dt))
        self._setup_arm()
        self.obs = ObservationLayout(observations.TABLE, {"joints": J}, (), cfg, cfg.noise.scale, self.device)
        self.obs_layout = self.obs.policy
        """The policy's observation terms in order, ``(name, size)`` (exported for deployment)."""
        self.obs_dims = {"policy": self.obs.full_dim}
        self._set_rewards(rewards.TERMS, reward_weights(cfg))
        self.targets = Targets(cfg.targets, self.arm.shoulder, self._uniform, self.device)
        self.parts: TaskParts[View, Measured] = self._assemble()
        self._filmed: mujoco.MjModel | None = None
        """The model copy ``render_model`` last gave out (its target site follows the filmed env's target)."""

    def _setup_arm(self) -> None:
        arm, dev, cfg = self.arm, self.device, self.cfg
        self.action_spec = ActionSpec(discrete=False, n=self.num_joints)
        self.default_joint_pos = torch.tensor(arm.spec.default_pose, dtype=torch.float32, device=dev)
        self._qpos, self._dof = columns(arm.joint_qpos_adr, dev), columns(arm.joint_dof_adr, dev)
        self.action_scale = cfg.action_scale
        ctrl = sorted(range(self.num_joints), key=lambda i: arm.actuator_of_joint[i])  # joint of each actuator
        self.ctrl_order = None if ctrl == list(range(self.num_joints)) else torch.tensor(ctrl, device=dev)
        ranges = torch.tensor(arm.joint_range, dtype=torch.float32, device=dev)
        self._low, self._high = ranges[:, 0], ranges[:, 1]
        self._qpos0 = torch.tensor(self.model.qpos0, dtype=torch.float32, device=dev)
        self.tip = SiteKinematics(self.model, arm.fingertip_site_id, dev)
        data = mujoco.MjData(self.model)
        mujoco.mj_forward(self.model, data)
        base = self.model.body(arm.spec.base_body).id
        self.frame = observations.Frame(torch.tensor(data.xpos[base], dtype=torch.float32, device=dev),
                                        torch.tensor(data.xmat[base].reshape(3, 3), dtype=torch.float32, device=dev))

    def _assemble(self) -> TaskParts[View, Measured]:
        """The step's parts from the job modules."""
        cfg, state = self.cfg, self.state
        measure = Measure(cfg, state, self.tip, self._dof)
        resets = Resets(self.physics, state, self.targets, self._uniform, cfg.init_joint_noise,
                        self.default_joint_pos, self._qpos0, self._qpos, (self._low, self._high), self.model.nv)
        observe = observations.Observer(self.obs, state, (self._qpos, self._dof), self.default_joint_pos,
                                        self.frame, self.generator, self.num_envs)
        return TaskParts(view=measure.view, measure=measure.measure, reward_context=measure.reward_context,
                         too_fast=measure.too_fast, terminations=(), resample=resets.resample, observe=observe,
                         events=Events(reset=resets.reset, after_step=measure.after_step),
                         report=metrics.report(cfg.success_radius))

    # ------------------------------------------------------------------------------------ views
    def fingertip(self) -> torch.Tensor:
        """Fingertip positions ``[N, 3]`` (world, m) of the current state."""
        return self.tip(self.physics.read().qpos)

    def render_model(self, index: int) -> mujoco.MjModel:
        """A copy of the model with the target site at env ``index``'s current target; ``caption`` moves it to
        each new target (the copy is only rendered)."""
        self._filmed = copy.copy(self.model)
        self._filmed.site_pos[self.arm.target_site_id] = self.state.target[index].cpu().numpy().astype(np.float64)
        return self._filmed

    def caption(self, index: int) -> str:
        """Env ``index``'s target and the fingertip's distance from it (a video's caption)."""
        target = self.state.target[index].cpu().numpy().astype(np.float64)
        if self._filmed is not None:
            self._filmed.site_pos[self.arm.target_site_id] = target
        distance = float(np.linalg.norm(target - self.fingertip()[index].cpu().numpy()))
        return f"target {target[0]:+.2f} {target[1]:+.2f} {target[2]:+.2f} m  distance {100 * distance:.1f} cm"

    def export_metadata(self) -> dict[str, Any]:
        """What a deployment needs (``export.py``; the schema: ``contract/schema.py``)."""
        return export.metadata(self.cfg, self.arm, self.obs, self.frame, self.dt)


def reward_weights(cfg: ReachEnvConfig) -> dict[str, float]:
    """The weight of every reward term: the fields of ``ReachRewardScales``."""
    return weights_of(cfg.rewards)
