"""A tracking step's quantities: one frame further along the clip, the robot's errors against it, the reward
context, the robot's speed bounds, its failure and cut, the state a step leaves (parts of ``envs/tasks/parts.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.motion.kinematics import TreeKinematics
from envs.physics.base import PhysicsReadout
from envs.tasks.bounds import SpeedBounds
from envs.tasks.locomotion.terminations import MAX_SANE_QVEL
from envs.tasks.track import rewards
from envs.tasks.track.config import TrackEnvConfig
from envs.tasks.track.errors import Errors, tracking_errors
from envs.tasks.track.library import MotionLibrary
from envs.tasks.track.sampling import StartSampler
from envs.tasks.track.state import TrackState
from envs.tasks.track.view import Columns, View

WRITES = ("frame", "last_actions")
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


@dataclass(frozen=True)
class Measured:
    """What the parts of one tracking step share."""

    v: View
    e: Errors
    failed: torch.Tensor
    """``[N]`` bool: the anchor left its height or tilt band."""


class Measure:
    """The step's quantities of the robot (``columns``: its readout columns, ``fk``: its tracked bodies) against
    ``library``'s reference at ``state``'s frame."""

    def __init__(self, cfg: TrackEnvConfig, state: TrackState, library: MotionLibrary, fk: TreeKinematics,
                 columns: Columns, sampler: StartSampler):
        self.cfg, self.state, self.library, self.fk, self.columns, self.sampler = (
            cfg, state, library, fk, columns, sampler)

    def view(self, r: PhysicsReadout) -> View:
        return View(r, self.fk, self.columns)

    def measure(self, v: View, actions: torch.Tensor) -> Measured:
        """One frame further along the clip; the robot's errors against it."""
        state, cfg = self.state, self.cfg
        state.frame = state.frame + 1
        e = tracking_errors(v.poses, v.joint_pos, self.library.at(state.frame), self.columns.anchor)
        return Measured(v, e, (e.height_gap > cfg.anchor_height_band) | (e.tilt_gap > cfg.anchor_tilt_band))

    def reward_context(self, q: Measured, actions: torch.Tensor) -> rewards.Context:
        return rewards.Context(q.e, actions, self.state.last_actions, self.cfg.reward_params)

    def clip_end(self, q: Measured) -> torch.Tensor:
        """The clip's last frame is reached (bootstrapped like a time-out)."""
        return self.state.frame >= self.library.env_last

    def after_step(self, q: Measured, actions: torch.Tensor) -> None:
        self.state.last_actions = actions
        self.sampler.advance()


def failed(q: Measured) -> torch.Tensor:
    """The anchor left its height or tilt band."""
    return q.failed


class TooFast:
    """Beyond ``MAX_SANE_QVEL``, a joint's or the base's speed bound, or not finite (NaN fails the ``<=``)."""

    def __init__(self, bounds: SpeedBounds, base_dof: int, joint_dof: torch.Tensor, device: torch.device):
        self.bounds, self.base_dof, self.joint_dof = bounds, base_dof, joint_dof
        self.joint_bound = torch.tensor(bounds.joint_vel, device=device)

    def __call__(self, qvel: torch.Tensor) -> torch.Tensor:
        b, d = self.bounds, self.base_dof
        joints = qvel[:, self.joint_dof]
        sane = (qvel.abs() <= MAX_SANE_QVEL).all(1) & (joints.abs() <= self.joint_bound).all(1)
        out = ~sane | (qvel[:, d:d + 3].norm(dim=1) > b.base_lin_vel)
        return out | (qvel[:, d + 3:d + 6].norm(dim=1) > b.base_ang_vel)
