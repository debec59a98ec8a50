"""The clips of a tracking run as reference tensors: every clip replayed in the robot's scene at the control rate
(``envs/motion/replay.py``), concatenated frame-wise, and each env's clip (env ``i`` plays clip ``i % C``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from contract.motion import Clip
from envs.motion.kinematics import quat_to_matrix
from envs.motion.replay import replay
from envs.robots.resolved import ResolvedRobot


@dataclass(frozen=True)
class Frames:
    """The reference at one frame per env (``[N, ...]``, world frame)."""

    joint_pos: torch.Tensor
    """``[N, J]`` joint angles (policy order, rad)."""
    joint_vel: torch.Tensor
    """``[N, J]`` joint velocities (rad/s)."""
    body_pos: torch.Tensor
    """``[N, B, 3]`` tracked bodies' positions (m)."""
    body_rot: torch.Tensor
    """``[N, B, 3, 3]`` their orientations."""
    body_lin_vel: torch.Tensor
    """``[N, B, 3]``."""
    body_ang_vel: torch.Tensor
    """``[N, B, 3]``."""


class MotionLibrary:
    """Reference tensors of ``clips`` (each already at the control rate) for ``robot`` on ``device``."""

    def __init__(self, clips: list[Clip], robot: ResolvedRobot, body_ids: tuple[int, ...], num_envs: int,
                 device: torch.device):
        refs = [replay(robot.model, c, body_ids, f"motion clip {c.name}") for c in clips]

        def cat(key: str) -> torch.Tensor:
            return torch.tensor(np.concatenate([getattr(r, key) for r in refs]), dtype=torch.float32, device=device)

        self.clips = clips
        self.qpos, self.qvel = cat("qpos"), cat("qvel")
        """``[T, nq]`` / ``[T, nv]``: every frame's state (the state a reset to it starts from)."""
        self.body_pos, self.body_rot = cat("body_pos"), quat_to_matrix(cat("body_quat"))
        self.body_lin_vel, self.body_ang_vel = cat("body_lin_vel"), cat("body_ang_vel")
        self.joint_pos = self.qpos[:, list(robot.joint_qpos_adr)]
        self.joint_vel = self.qvel[:, list(robot.joint_dof_adr)]
        lengths = [r.frames for r in refs]
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        env_clip = torch.arange(num_envs, device=device) % len(clips)
        self.lengths = lengths
        """Frames of each clip."""
        self.env_clip = env_clip
        """``[N]`` the clip of each env."""
        self.env_offset = torch.tensor(offsets, dtype=torch.long, device=device)[env_clip]
        """``[N]`` the first row of each env's clip."""
        self.env_last = torch.tensor(lengths, dtype=torch.long, device=device)[env_clip] - 1
        """``[N]`` the last frame of each env's clip."""

    def rows(self, frame: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """The library rows of ``frame`` (``[n]``, or ``[n, K]``: K frames each) of the envs ``rows`` (None: every
        env), clamped into their clip."""
        offset, last = (self.env_offset, self.env_last) if rows is None else (self.env_offset[rows],
                                                                               self.env_last[rows])
        if frame.dim() == 2:
            offset, last = offset.unsqueeze(1), last.unsqueeze(1)
        return offset + torch.minimum(frame.clamp(min=0), last)

    def at(self, frame: torch.Tensor, rows: torch.Tensor | None = None) -> Frames:
        """The reference at ``frame`` of each env (``rows``: of these envs only)."""
        i = self.rows(frame, rows)
        return Frames(self.joint_pos[i], self.joint_vel[i], self.body_pos[i], self.body_rot[i], self.body_lin_vel[i],
                      self.body_ang_vel[i])

    def phase(self, frame: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """``[n]`` the share of each env's clip played at ``frame`` (0 at its first frame, 1 at its last)."""
        last = self.env_last if rows is None else self.env_last[rows]
        return frame.float() / last.float()
