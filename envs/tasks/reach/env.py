"""Reaching: a fixed-base arm moves its fingertip to random targets (a second task family on ``MujocoTask``).

The arm is data (``arm.py``: names resolved once against ``arm.xml``). ``MujocoTask`` (``envs/tasks/base.py``)
owns the physics, the random stream, the task state, checkpoints and the step's recipe; this class supplies the
recipe's hooks and wires the jobs:

    state.py          the per-env task state, declared once
    targets.py        targets drawn in the workspace at resets and every ``targets.resample_s``
    kinematics.py     the fingertip's position from the joint angles (valid right after a reset too)
    observations.py   the observation table and each term's value
    rewards.py        the reward terms, each a small function of the step's ``Context``
    export.py         the exported policy's metadata

Episodes end by their time-out (truncated, bootstrapped) or by divergence (non-finite state or observation,
a joint faster than ``max_joint_vel``: terminated, ``invalid``, reward zeroed, never a success).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mujoco
import numpy as np
import torch

from envs.physics.base import PhysicsReadout
from envs.tasks.base import MujocoTask, columns
from envs.tasks.observations import ObservationLayout
from envs.tasks.reach import export, observations, rewards
from envs.tasks.reach.arm import ARM, ArmSpec, ResolvedArm, resolve
from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.kinematics import SiteKinematics
from envs.tasks.reach.state import ReachState
from envs.tasks.reach.targets import Targets
from envs.tasks.reward_terms import weights_of
from rl_core.env_api import ActionSpec, Obs


class View:
    """A readout with its fingertip, computed once (the reward's distance and the observation read it)."""

    def __init__(self, r: PhysicsReadout, tip: Callable[[torch.Tensor], torch.Tensor]):
        self.r, self._tip = r, tip

    @cached_property
    def tip(self) -> torch.Tensor:
        """Fingertip positions ``[N, 3]`` (world, m)."""
        return self._tip(self.r.qpos)


@dataclass(frozen=True)
class Measured:
    """What the hooks of one reaching step share."""

    joint_vel: torch.Tensor
    """``[N, J]`` rad/s."""
    distance: torch.Tensor
    """Fingertip to target ``[N]`` (m)."""


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
        self._max_joint_vel = cfg.max_joint_vel

    # ------------------------------------------------------------------------------------ the step's hooks
    def _view(self, r: PhysicsReadout) -> View:
        return View(r, self.tip)

    def _measure(self, v: View, actions: torch.Tensor) -> Measured:
        return Measured(v.r.qvel[:, self._dof], torch.norm(self.state.target - v.tip, dim=1))

    def _reward_context(self, q: Measured, actions: torch.Tensor) -> rewards.Context:
        return rewards.Context(distance=q.distance, actions=actions, last_actions=self.state.last_actions,
                               joint_vel=q.joint_vel, params=self.cfg.reward_params)

    def _too_fast(self, qvel: torch.Tensor) -> torch.Tensor:
        return ~(qvel.abs() <= self._max_joint_vel).all(1)  # NaN fails the <= too

    def _after_rewards(self, q: Measured, actions: torch.Tensor) -> None:
        self.state.last_actions = actions

    def _resample(self, q: Measured, mask: torch.Tensor) -> None:
        """New targets for the envs that go on: the observation shows them (a done env's final observation keeps
        the target it was tracking)."""
        self.targets.sample(self.state, mask)

    def _observe(self, v: View, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        """The (noisy) policy observation, non-finite values replaced by 0, and with ``check`` ``[N]`` bool: it
        was non-finite."""
        state, r = self.state, v.r
        target, last = (state.target, state.last_actions) if rows is None else (state.target[rows],
                                                                                 state.last_actions[rows])
        values = observations.values(r.qpos[:, self._qpos], r.qvel[:, self._dof], self.default_joint_pos, target,
                                     v.tip, last, self.frame)
        obs = self.obs.noisy(self.obs.exact(values), self.generator, self.num_envs, rows)
        bad = ~torch.isfinite(obs).all(dim=1) if check else None
        return {"policy": torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)}, bad

    def _episode_stats(self, q: Measured, ended: torch.Tensor) -> dict[str, torch.Tensor]:
        """``success`` (the fingertip ended within ``success_radius``) and ``final_distance`` of the episodes that
        ended; a diverged episode has no final distance and is never a success."""
        nan = torch.full_like(q.distance, float("nan"))
        return {"success": torch.where(ended, (q.distance <= self.cfg.success_radius).float(), nan),
                "final_distance": torch.where(ended, q.distance, nan)}

    def _measures(self, q: Measured) -> dict[str, torch.Tensor]:
        return {"distance": q.distance}

    def _metrics(self, q: Measured) -> dict[str, torch.Tensor]:
        return {"distance": q.distance}

    # ------------------------------------------------------------------------------------ resets
    def reset_envs(self, mask: torch.Tensor) -> None:
        """The masked envs start near the default pose, at rest, with a new target (fixed shapes, no sync)."""
        n, noise = mask.shape[0], self.cfg.init_joint_noise
        qpos = self._qpos0.expand(n, -1).clone()
        joints = self.default_joint_pos + self._uniform((n, self.num_joints), -noise, noise)
        qpos[:, self._qpos] = torch.maximum(torch.minimum(joints, self._high), self._low)
        self.physics.reset(mask, qpos, torch.zeros(n, self.model.nv, device=self.device))
        self.targets.sample(self.state, mask)
        self.state.clear(mask)

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
