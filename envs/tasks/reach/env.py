"""Reaching: a fixed-base arm moves its fingertip to random targets (a second task family on ``MujocoTask``).

The arm is data (``arm.py``: names resolved once against ``arm.xml``). ``MujocoTask`` (``envs/tasks/base.py``)
owns the physics, the random stream, the task state and checkpoints; this class wires the jobs:

    state.py          the per-env task state, declared once
    targets.py        targets drawn in the workspace at resets and every ``targets.resample_s``
    kinematics.py     the fingertip's position from the joint angles (valid right after a reset too)
    observations.py   the observation table and each term's value
    rewards.py        the reward terms, each a small function of the step's ``Context``
    metrics.py        the iteration log and the evaluator's metrics
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

from envs.physics.base import PhysicsReadout
from envs.tasks.base import MujocoTask, columns
from envs.tasks.observations import ObservationLayout
from envs.tasks.reach import export, metrics, observations, rewards
from envs.tasks.reach.arm import ARM, ArmSpec, ResolvedArm, resolve
from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.kinematics import SiteKinematics
from envs.tasks.reach.state import ReachState
from envs.tasks.reach.targets import Targets
from envs.tasks.reward_terms import weight_column, weights_of
from rl_core.env_api import ActionSpec, Obs, StepInfo


class ReachEnv(MujocoTask[ReachState]):
    """``cfg.num_envs`` arms reaching random targets; satisfies ``rl_core.env_api.VecEnv``."""

    def __init__(self, cfg: ReachEnvConfig, device: torch.device | str = "cpu", arm: ArmSpec = ARM):
        self.cfg = cfg
        weights = reward_weights(cfg)
        rewards.TERMS.check(weights)
        self.arm: ResolvedArm = resolve(arm)
        J = self.num_joints = self.arm.num_joints
        super().__init__(cfg, self.arm.model, (), ReachState, {"joints": J}, device)
        self.camera = arm.camera
        self.max_episode_length = self.episode_steps(cfg.episode_length_s)
        self.resample_steps = max(1, round(cfg.targets.resample_s / self.dt))
        self._setup_arm()
        self.obs = ObservationLayout(observations.TABLE, {"joints": J}, (), cfg, cfg.noise.scale, self.device)
        self.obs_layout = self.obs.policy
        """The policy's observation terms in order, ``(name, size)`` (exported for deployment)."""
        self.obs_dims = {"policy": self.obs.full_dim}
        self.reward_terms = {name: w * self.dt for name, w in weights.items() if w != 0.0}
        """Each switched-on reward term's weight times the control period."""
        self._reward_column = weight_column(self.reward_terms, self.device)
        self.targets = Targets(cfg.targets, self.arm.shoulder, self._uniform, self.device)
        self._filmed: mujoco.MjModel | None = None
        """The model copy ``render_model`` last gave out (its target site follows the filmed env's target)."""

    def _setup_arm(self) -> None:
        arm, dev, cfg = self.arm, self.device, self.cfg
        self.action_spec = ActionSpec(discrete=False, n=self.num_joints)
        self.default_joint_pos = torch.tensor(arm.spec.default_pose, dtype=torch.float32, device=dev)
        self._qpos, self._dof = columns(arm.joint_qpos_adr, dev), columns(arm.joint_dof_adr, dev)
        ctrl = sorted(range(self.num_joints), key=lambda i: arm.actuator_of_joint[i])  # joint of each actuator
        self._ctrl_order = None if ctrl == list(range(self.num_joints)) else torch.tensor(ctrl, device=dev)
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

    # ------------------------------------------------------------------------------------ the step
    def _act(self, actions: torch.Tensor) -> torch.Tensor:
        """Clip the actions and advance the physics by one control step; returns the clipped actions."""
        clip = self.cfg.clip_actions
        actions = actions.to(self.device).clamp(-clip, clip)
        targets = self.default_joint_pos + self.cfg.action_scale * actions
        self.physics.step(targets if self._ctrl_order is None else targets[:, self._ctrl_order])
        return actions

    def _finish_step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        """Everything after the physics, top to bottom (torch only, fixed shapes, no host sync)."""
        cfg, state = self.cfg, self.state
        r = self.physics.read()
        state.episode_length += 1
        joint_vel = r.qvel[:, self._dof]
        tip = self.tip(r.qpos)  # once per readout: the reward's distance and the observation read it
        distance = torch.norm(state.target - tip, dim=1)
        x = rewards.Context(distance=distance, actions=actions, last_actions=state.last_actions,
                            joint_vel=joint_vel, params=cfg.reward_params)
        stacked = rewards.TERMS.stacked(self.reward_terms, self._reward_column, x)  # [terms, N], weighted
        reward = stacked.sum(0)
        diverged = self._diverged(r, reward)
        truncated = state.episode_length >= self.max_episode_length
        state.last_actions = actions
        # new targets for the envs that go on: the observation below shows them (a done env's final observation
        # keeps the target it was tracking)
        self.targets.sample(state, (state.episode_length % self.resample_steps == 0) & ~truncated & ~diverged)
        final_obs, bad_obs = self._observed(r, tip)
        diverged = diverged | bad_obs
        terminated, truncated = diverged, truncated & ~diverged
        done = terminated | truncated
        reward = torch.where(diverged, 0.0, reward)  # a non-finite reward is a diverged world's (_diverged)
        valid = ~diverged
        ended = done & valid  # a diverged episode has no final distance and is never a success
        nan = torch.full_like(distance, float("nan"))
        stats = {"success": torch.where(ended, (distance <= cfg.success_radius).float(), nan),
                 "final_distance": torch.where(ended, distance, nan)}
        obs = final_obs
        if self._needed(done):
            self._reset_envs(done)
            fresh = self._observed(self.physics.read())[0]
            obs = {g: torch.where(done.unsqueeze(1), fresh[g], final_obs[g]) for g in final_obs}
        info: StepInfo = {
            "final_obs": final_obs if self._needed(truncated) else None, "invalid": diverged,
            "log": metrics.log(stacked, list(self.reward_terms), valid, distance, terminated, truncated, diverged),
            "episode_stats": stats, "metrics": {"distance": distance}}
        return obs, reward, terminated, truncated, info

    def _diverged(self, r: PhysicsReadout, reward: torch.Tensor) -> torch.Tensor:
        """``[N]`` bool: a non-finite state or reward, a joint faster than ``max_joint_vel``, or the backend's alarm
        (the observation's own check comes later)."""
        finite = torch.isfinite(r.qpos).all(1) & torch.isfinite(r.qvel).all(1) & torch.isfinite(reward)
        out = ~finite | (r.qvel.abs() > self._max_joint_vel).any(1)
        if r.unstable is not None:
            out |= r.unstable.to(reward.device)
        return out

    def _observed(self, r: PhysicsReadout, tip: torch.Tensor | None = None) -> tuple[Obs, torch.Tensor]:
        """The (noisy) policy observation, non-finite values replaced by 0, and ``[N]`` bool: it was non-finite.
        ``tip``: the fingertip of ``r`` when already computed."""
        values = observations.values(r.qpos[:, self._qpos], r.qvel[:, self._dof], self.default_joint_pos,
                                     self.state.target, self.tip(r.qpos) if tip is None else tip,
                                     self.state.last_actions, self.frame)
        obs = self.obs.noisy(self.obs.exact(values), self.generator, self.num_envs)
        bad = ~torch.isfinite(obs).all(dim=1)
        return {"policy": torch.nan_to_num(obs, nan=0.0, posinf=0.0, neginf=0.0)}, bad

    # ------------------------------------------------------------------------------------ resets
    def _reset_envs(self, mask: torch.Tensor) -> None:
        """The masked envs start near the default pose, at rest, with a new target (fixed shapes, no sync)."""
        n, noise = mask.shape[0], self.cfg.init_joint_noise
        qpos = self._qpos0.expand(n, -1).clone()
        joints = self.default_joint_pos + self._uniform((n, self.num_joints), -noise, noise)
        qpos[:, self._qpos] = torch.maximum(torch.minimum(joints, self._high), self._low)
        self.physics.reset(mask, qpos, torch.zeros(n, self.model.nv, device=self.device))
        self.targets.sample(self.state, mask)
        self.state.clear(mask)

    def _reset_all(self) -> Obs:
        self._reset_envs(self._all)
        if self.cfg.randomize_initial_episode_length:
            self.state.episode_length = torch.randint(0, self.max_episode_length, (self.num_envs,),
                                                      generator=self.generator, device=self.device)
        return self._observed(self.physics.read())[0]

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
        """What a deployment needs (``export.py``; the schema: ``deploy/schema.py``)."""
        return export.metadata(self)


def reward_weights(cfg: ReachEnvConfig) -> dict[str, float]:
    """The weight of every reward term: the fields of ``ReachRewardScales``."""
    return weights_of(cfg.rewards)
