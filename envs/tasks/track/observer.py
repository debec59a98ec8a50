"""The tracking task's observation of a view: the robot, the reference's next frames and the last actions, noisy,
with its validity check (a ``parts.Observe``)."""

from __future__ import annotations

import torch

from envs.tasks.observations import ObservationLayout
from envs.tasks.track import observations
from envs.tasks.track.config import TrackEnvConfig
from envs.tasks.track.library import MotionLibrary
from envs.tasks.track.state import TrackState
from envs.tasks.track.view import View
from rl_core.env_api import Obs

OBS_LIMIT = 1e4
"""A noise-free observation value beyond this (or not finite) means the world has diverged."""


class Observer:
    """The policy's observation (``future_frames`` reference frames ahead; ``anchor``: the anchor's index among
    the tracked bodies; the noise drawn from ``generator`` for all ``num_envs`` envs)."""

    def __init__(self, layout: ObservationLayout[observations.Inputs, TrackEnvConfig], state: TrackState,
                 library: MotionLibrary, anchor: int, future_frames: int, default: torch.Tensor,
                 generator: torch.Generator, num_envs: int):
        self.layout, self.state, self.library, self.anchor = layout, state, library, anchor
        self.default, self.generator, self.num_envs = default, generator, num_envs
        self.ahead = torch.arange(1, future_frames + 1, device=default.device)
        self.bound = layout.bounds(None, OBS_LIMIT)
        """Every column: ``OBS_LIMIT``."""

    def __call__(self, v: View, rows: torch.Tensor | None = None, check: bool = True
                 ) -> tuple[Obs, torch.Tensor | None]:
        state, lib = self.state, self.library
        frame = state.frame if rows is None else state.frame[rows]
        idx = lib.rows(frame.unsqueeze(1) + self.ahead, rows)  # [n, K]: the next frames
        nxt, a = idx[:, 0], self.anchor
        view = observations.Ahead(lib.joint_pos[idx], lib.joint_vel[idx], lib.body_pos[nxt, a], lib.body_rot[nxt, a],
                                  lib.phase(frame, rows))
        last = state.last_actions if rows is None else state.last_actions[rows]
        x = observations.Inputs(v.robot(), view, self.default, last)
        _, obs, bad = self.layout.observe(x, self.bound, self.generator, self.num_envs, rows, check)
        return {"policy": obs}, bad
