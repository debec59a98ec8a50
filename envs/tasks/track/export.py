"""What a deployment of a tracking policy needs (stored in exported policies; ``deploy/sim2sim_track.py`` runs it).

Besides the robot, servo and observation keys every legged family exports, the clips travel in the file:
``motion_clips`` holds each clip at the control rate in our format (``contract/motion.py``: ``.npz`` bytes,
zlib-compressed, base64) with its name, source and the SHA-256 of the clip as it was read, so a runtime replays the
reference from the ONNX file alone. ``motion`` says how the policy reads it: ``anchor_body`` (the body whose pose
the ``motion_anchor_*`` terms compare), ``future_frames`` (the frames ahead in ``motion_joint_*``), the
termination bands, and ``phase``: the clip's frame index over its last frame index, one frame per control step from
the start frame (the ``motion_phase`` term).
"""

from __future__ import annotations

import base64
import math
import zlib
from typing import Any

from contract.motion import to_bytes
from envs.robots.resolved import ResolvedRobot
from envs.tasks.observations import ObservationLayout
from envs.tasks.scene_bytes import scene_bytes
from envs.tasks.track.clips import Played
from envs.tasks.track.config import TrackEnvConfig

PHASE = "frame / last frame of the env's clip; the frame advances by one each control step from the start frame"
"""The ``motion.phase`` entry: how the runtime computes the ``motion_phase`` input."""


def clip_entry(p: Played) -> dict[str, Any]:
    """One clip of ``motion_clips``."""
    return {"name": p.clip.name, "source": p.source, "sha256": p.sha256, "fps": p.clip.fps, "frames": p.clip.frames,
            "npz": base64.b64encode(zlib.compress(to_bytes(p.clip), 9)).decode("ascii")}


def metadata(cfg: TrackEnvConfig, rb: ResolvedRobot, layout: ObservationLayout, dt: float, played: list[Played],
             anchor: str) -> dict[str, Any]:
    """The exported metadata of a tracking task (see the module docstring)."""
    return {
        "task_family": "track",
        "robot": rb.spec.name,
        "scene_mjb": scene_bytes(rb.model),
        "base_joint": rb.base_joint,
        "obs_layout": [list(item) for item in layout.policy],
        "obs_scales": layout.export_scales(),
        "joint_names": list(rb.joint_names),
        "default_joint_pos": list(rb.default_joint_pos),
        "joint_pos_limits": [list(r) for r in rb.joint_range],
        "action_scale": list(rb.action_scale),
        "velocity_limits": [v if math.isfinite(v) else None for v in rb.velocity_limit],
        "action_clip": cfg.clip_actions,
        "kp": list(rb.kp),
        "kd": list(rb.kd),
        "torque_limits": [None if math.isinf(x) else x for x in rb.effort_limit],
        "control_dt": dt,
        "sim_dt": rb.model.opt.timestep,
        "decimation": cfg.decimation,
        "episode_length_s": cfg.episode_length_s,
        "motion_clips": [clip_entry(p) for p in played],
        "motion": {"anchor_body": anchor, "future_frames": cfg.future_frames,
                   "anchor_height_band": cfg.anchor_height_band, "anchor_tilt_band": cfg.anchor_tilt_band,
                   "phase": PHASE},
    }
