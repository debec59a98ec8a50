"""What a deployment of a reaching policy needs (stored in exported policies; ``deploy/sim2sim_reach.py`` runs it).

Observation term ``name`` is ``(value - offset) * scale`` with the offset ``default_joint_pos`` for ``joint_pos``
and 0 otherwise; ``target_pos`` is the target minus ``base_pos`` and ``to_target`` the target minus the
fingertip site's position, both rotated into the base frame (``base_rot``, row-major base-to-world). Actions
become joint targets ``default_joint_pos + action_scale * clip(action, -action_clip, action_clip)`` for the
position servos (``kp`` / ``kd``), sent every ``control_dt`` seconds. Targets are drawn around ``shoulder_pos``
in the ``target_ranges`` (the schema: ``deploy/schema.py``, family ``reach``).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from envs.tasks.base import scene_bytes

if TYPE_CHECKING:
    from envs.tasks.reach.env import ReachEnv


def metadata(env: ReachEnv) -> dict[str, Any]:
    """The exported metadata of ``env`` (see the module docstring)."""
    cfg, arm = env.cfg, env.arm
    return {
        "task_family": "reach",
        "robot": arm.spec.name,
        "scene_mjb": scene_bytes(env.model),
        "obs_layout": [list(item) for item in env.obs_layout],
        "obs_scales": env.obs.export_scales(),
        "joint_names": list(arm.spec.joints),
        "default_joint_pos": list(arm.spec.default_pose),
        "joint_pos_limits": [list(r) for r in arm.joint_range],
        "action_scale": [cfg.action_scale] * arm.num_joints,
        "action_clip": cfg.clip_actions,
        "kp": list(arm.kp),
        "kd": list(arm.kd),
        "torque_limits": list(arm.torque_limit),
        "control_dt": env.dt,
        "sim_dt": env.model.opt.timestep,
        "decimation": cfg.decimation,
        "episode_length_s": cfg.episode_length_s,
        "fingertip_site": arm.spec.fingertip_site,
        "target_site": arm.spec.target_site,
        "base_pos": env.frame.origin.tolist(),
        "base_rot": env.frame.rot.reshape(-1).tolist(),
        "shoulder_pos": list(arm.shoulder),
        "target_ranges": asdict(cfg.targets),
        "success_radius": cfg.success_radius,
        "init_joint_noise": cfg.init_joint_noise,
    }
