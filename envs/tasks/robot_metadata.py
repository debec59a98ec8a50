"""The exported metadata keys every legged family writes alike: the robot, its scene, the observation layout, the
joints with their limits, the action's mapping to servo targets and the servos' gains, and the control timing
(their meaning and format: ``contract/schema.py``). A family adds its own keys around them."""

from __future__ import annotations

import math
from typing import Any

import mujoco

from envs.robots.resolved import ResolvedRobot
from envs.tasks.observations import ObservationLayout
from envs.tasks.scene_bytes import scene_bytes


def robot_metadata(rb: ResolvedRobot, scene: mujoco.MjModel, layout: ObservationLayout, clip_actions: float,
                   dt: float, decimation: int) -> dict[str, Any]:
    """The shared keys for robot ``rb`` exported with the compiled ``scene`` (sim2sim simulates it)."""
    return {
        "robot": rb.spec.name,
        "scene_mjb": scene_bytes(scene),
        "base_joint": rb.base_joint,
        "obs_layout": [list(item) for item in layout.policy],
        "obs_scales": layout.export_scales(),
        "joint_names": list(rb.joint_names),
        "default_joint_pos": list(rb.default_joint_pos),
        "joint_pos_limits": [list(r) for r in rb.joint_range],
        "action_scale": list(rb.action_scale),
        "velocity_limits": [v if math.isfinite(v) else None for v in rb.velocity_limit],
        "action_clip": clip_actions,
        "kp": list(rb.kp),
        "kd": list(rb.kd),
        "torque_limits": [None if math.isinf(x) else x for x in rb.effort_limit],
        "control_dt": dt,
        "sim_dt": rb.model.opt.timestep,
        "decimation": decimation,
    }
