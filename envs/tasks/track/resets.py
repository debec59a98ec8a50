"""Resets of the tracking task: a reset env starts at a drawn frame of its clip in the reference's state, with the
start noise; an episode that failed tells the start sampler where (parts of ``envs/tasks/parts.py``)."""

from __future__ import annotations

import torch

from envs.physics.base import Physics
from envs.tasks.rotations import from_yaw
from envs.tasks.track.config import StartConfig
from envs.tasks.track.library import MotionLibrary
from envs.tasks.track.sampling import StartSampler, Uniform
from envs.tasks.track.state import TrackState
from envs.tasks.track.step import Measured
from envs.tasks.track.view import Columns

WRITES = ("frame",)
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


class Resets:
    """Resets ``physics`` and ``state`` to ``library``'s reference (``limits``: the joints' ranges, ``[J]`` each)."""

    def __init__(self, cfg: StartConfig, physics: Physics, state: TrackState, library: MotionLibrary,
                 sampler: StartSampler, columns: Columns, limits: tuple[torch.Tensor, torch.Tensor],
                 uniform: Uniform):
        self.cfg, self.physics, self.state, self.library, self.sampler = cfg, physics, state, library, sampler
        self.columns, self.limits, self.uniform = columns, limits, uniform

    def reset(self, mask: torch.Tensor) -> None:
        """The masked envs start at a drawn frame of their clip in the reference's state, with the start noise
        (fixed shapes, no sync)."""
        state, lib, s, n = self.state, self.library, self.cfg, mask.shape[0]
        frame = torch.where(mask, self.sampler.sample(n), state.frame)
        rows = lib.rows(frame)
        qpos, qvel = lib.qpos[rows].clone(), lib.qvel[rows].clone()
        b, d, joint_qpos = self.columns.base_qpos, self.columns.base_dof, self.columns.joint_qpos
        qpos[:, b:b + 2] += self.uniform((n, 2), -s.base_xy, s.base_xy)
        turn = from_yaw(self.uniform((n,), -s.base_yaw, s.base_yaw))
        qpos[:, b + 3:b + 7] = quat_mul(turn, qpos[:, b + 3:b + 7])
        c, si = turn[:, 0:1] ** 2 - turn[:, 3:4] ** 2, 2 * turn[:, 0:1] * turn[:, 3:4]  # cos, sin of the yaw offset
        vx, vy = qvel[:, d:d + 1].clone(), qvel[:, d + 1:d + 2].clone()
        qvel[:, d:d + 1], qvel[:, d + 1:d + 2] = c * vx - si * vy, si * vx + c * vy
        joints = qpos[:, joint_qpos] + self.uniform((n, joint_qpos.shape[0]), -s.joint_pos, s.joint_pos)
        qpos[:, joint_qpos] = torch.maximum(torch.minimum(joints, self.limits[1]), self.limits[0])
        self.physics.reset(mask, qpos, qvel)
        state.frame = frame
        state.clear(mask)

    def episode_end(self, q: Measured, ended: torch.Tensor) -> None:
        """The episodes that ended in a failure count against their start's bin."""
        self.sampler.record(ended & q.failed, self.state.frame)


def quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton products ``[N, 4]`` (w x y z)."""
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                        aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], dim=-1)
