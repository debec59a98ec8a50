"""What a deployment of a reaching policy needs (stored in exported policies; ``deploy/sim2sim_reach.py`` runs it).

Observation term ``name`` is ``(value - offset) * scale`` with the offset ``default_joint_pos`` for ``joint_pos``
and 0 otherwise; ``target_pos`` is the target minus ``base_pos`` and ``to_target`` the target minus the
fingertip site's position, both rotated into the base frame (``base_rot``, row-major base-to-world). Actions
become joint targets ``default_joint_pos + action_scale * clip(action, -action_clip, action_clip)`` for the
position servos (``kp`` / ``kd``), sent every ``control_dt`` seconds. Targets are drawn around ``shoulder_pos``
in the ``target_ranges`` (the schema: ``contract/schema.py``, family ``reach``).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import mujoco

from envs.scenes.physics_only import physics_only
from envs.tasks.observations import ObservationLayout
from envs.tasks.reach.arm import ResolvedArm
from envs.tasks.reach.config import ReachEnvConfig
from envs.tasks.reach.observations import Frame
from envs.tasks.scene_bytes import scene_bytes


def metadata(cfg: ReachEnvConfig, arm: ResolvedArm, layout: ObservationLayout, frame: Frame, dt: float
             ) -> dict[str, Any]:
    """The exported metadata of a reaching task (see the module docstring)."""
    return {
        "task_family": "reach",
        "robot": arm.spec.name,
        "scene_mjb": scene_bytes(physics_only(mujoco.MjSpec.from_file(str(arm.spec.model_path)), arm.model)),
        "obs_layout": [list(item) for item in layout.policy],
        "obs_scales": layout.export_scales(),
        "joint_names": list(arm.spec.joints),
        "default_joint_pos": list(arm.spec.default_pose),
        "joint_pos_limits": [list(r) for r in arm.joint_range],
        "action_scale": [cfg.action_scale] * arm.num_joints,
        "action_clip": cfg.clip_actions,
        "kp": list(arm.kp),
        "kd": list(arm.kd),
        "torque_limits": list(arm.torque_limit),
        "control_dt": dt,
        "sim_dt": arm.model.opt.timestep,
        "decimation": cfg.decimation,
        "episode_length_s": cfg.episode_length_s,
        "fingertip_site": arm.spec.fingertip_site,
        "target_site": arm.spec.target_site,
        "base_pos": frame.origin.tolist(),
        "base_rot": frame.rot.reshape(-1).tolist(),
        "shoulder_pos": list(arm.shoulder),
        "target_ranges": asdict(cfg.targets),
        "success_radius": cfg.success_radius,
        "init_joint_noise": cfg.init_joint_noise,
    }
