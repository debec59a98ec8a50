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
import zlib
from dataclasses import replace
from typing import Any

import mujoco

from contract.motion import to_bytes
from envs.robots.resolved import ResolvedRobot
from envs.scenes.assemble import build
from envs.tasks.observations import ObservationLayout
from envs.tasks.robot_metadata import robot_metadata
from envs.tasks.track.clips import Played
from envs.tasks.track.config import TrackEnvConfig

PHASE = "frame / last frame of the env's clip; the frame advances by one each control step from the start frame"
"""The ``motion.phase`` entry: how the runtime computes the ``motion_phase`` input."""


def export_scene(rb: ResolvedRobot, cfg: TrackEnvConfig) -> mujoco.MjModel:
    """The trained scene (``rb.spec``: every joint already trained) without what only drawing uses
    (``envs/scenes/physics_only.py``)."""
    return build(rb.spec, replace(cfg.scene_options(), discard_visual=True)).model


def clip_entry(p: Played) -> dict[str, Any]:
    """One clip of ``motion_clips``."""
    return {"name": p.clip.name, "source": p.source, "sha256": p.sha256, "fps": p.clip.fps, "frames": p.clip.frames,
            "npz": base64.b64encode(zlib.compress(to_bytes(p.clip), 9)).decode("ascii")}


def metadata(cfg: TrackEnvConfig, rb: ResolvedRobot, layout: ObservationLayout, dt: float, played: list[Played],
             anchor: str) -> dict[str, Any]:
    """The exported metadata of a tracking task (see the module docstring)."""
    return {
        "task_family": "track",
        **robot_metadata(rb, export_scene(rb, cfg), layout, cfg.clip_actions, dt, cfg.decimation),
        "episode_length_s": cfg.episode_length_s,
        "motion_clips": [clip_entry(p) for p in played],
        "motion": {"anchor_body": anchor, "future_frames": cfg.future_frames,
                   "anchor_height_band": cfg.anchor_height_band, "anchor_tilt_band": cfg.anchor_tilt_band,
                   "phase": PHASE},
    }
