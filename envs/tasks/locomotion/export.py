"""What a deployment needs to rebuild the observation and apply the action (stored in exported policies).

Observation term ``name`` is ``(value - offset) * scale`` with the offset ``default_joint_pos`` for ``joint_pos``
and 0 otherwise; ``commands`` are (vx, vy, yaw rate). Actions become joint targets
``default_joint_pos + action_scale * clip(action, -action_clip, action_clip)`` (per joint) for position servos
with gains ``kp`` / ``kd``, sent every ``control_dt`` seconds; the ``held_joint_names`` are held at
``held_joint_pos`` by their own servos (gains ``held_kp`` / ``held_kd``, limits ``held_torque_limits``, read from
the compiled scene's actuators). The schema and its version (``format``, major 2 since per-joint ``action_scale``
and held joints, 2.1 since the held joints' gains): ``contract/schema.py``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from envs.robots.resolved import ResolvedRobot
from envs.scenes.assemble import build
from envs.tasks.locomotion.commands import COMMANDS
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.observations import ObservationLayout
from envs.tasks.robot_metadata import robot_metadata
from envs.terrain.generator import Terrain


def metadata(cfg: LocomotionEnvConfig, rb: ResolvedRobot, layout: ObservationLayout, dt: float,
             terrain: Terrain | None) -> dict[str, Any]:
    """The exported metadata of a velocity-tracking task (see the module docstring)."""
    # sim2sim simulates every collision (the scene rebuilt with collisions=full if training used feet only), and
    # the file carries the scene without what only drawing uses (envs/scenes/physics_only.py)
    scene = build(rb.spec, replace(cfg.scene_options(terrain), collisions="full", discard_visual=True))
    return {
        "task_family": "locomotion",
        **robot_metadata(rb, scene.model, layout, cfg.clip_actions, dt, cfg.decimation),
        "foot_names": list(rb.foot_names),
        "held_joint_names": list(rb.held_joint_names),
        "held_joint_pos": list(rb.held_joint_pos),
        **held_servos(rb),
        "base_height": rb.spec.base_height,
        "episode_length_s": cfg.episode_length_s,
        "command_ranges": {name: list(getattr(cfg.commands, name)) for name in COMMANDS},
        "command_resample_s": cfg.commands.resample_s,
        "command_min_lin_vel": cfg.commands.min_lin_vel,
        "collisions": cfg.collisions,  # what the policy was trained with (sim2sim simulates every collision)
        "termination_contact_sensors": list(scene.termination_sensors),
        "contact_force_threshold": cfg.contact_force_threshold,
        "success_distance": cfg.success_distance,
        **terrain_metadata(cfg, terrain),
    }


def held_servos(rb: ResolvedRobot) -> dict[str, list[Any]]:
    """``held_kp``, ``held_kd`` (N m/rad, N m s/rad) and ``held_torque_limits`` (N m; None where the servo is not
    force-limited) of each held joint, in ``held_joint_names`` order, from the compiled scene's position servo on
    it (``ctrl_from_policy``: ``num_joints + h`` for the h-th held joint), as the trained joints' gains are built."""
    m, J = rb.model, rb.num_joints
    actuator = {src - J: a for a, src in enumerate(rb.ctrl_from_policy) if src >= J}
    out: dict[str, list[Any]] = {"held_kp": [], "held_kd": [], "held_torque_limits": []}
    for h in range(rb.num_held):
        a = actuator[h]
        out["held_kp"].append(float(m.actuator_gainprm[a, 0]))
        out["held_kd"].append(float(-m.actuator_biasprm[a, 2]))
        lim = float(np.abs(m.actuator_forcerange[a]).max()) if m.actuator_forcelimited[a] else math.inf
        out["held_torque_limits"].append(None if math.isinf(lim) else lim)
    return out


def terrain_metadata(cfg: LocomotionEnvConfig, terrain: Terrain | None) -> dict[str, Any]:
    """The height scan's grid (``height_scan``: points, extents, offset, clip; the scan observation is
    ``clip(base z - ground z at each point - offset)``, points in the base's yaw frame) and the generated
    terrain's tiles (``terrain``: its config, tile size, each column's type and each tile's start point
    ``origins [levels][columns][x, y, z]``); the heights themselves are the scene's heightfield."""
    out: dict[str, Any] = {}
    scan = cfg.height_scan
    if scan.enabled:
        out["height_scan"] = {"points_x": scan.points_x, "points_y": scan.points_y, "size_x": scan.size_x,
                              "size_y": scan.size_y, "offset": scan.offset, "clip": scan.clip}
    if terrain is not None:
        t = terrain
        out["terrain"] = {"config": asdict(cfg.terrain), "tile_size": t.tile_size, "levels": t.levels,
                          "columns": t.columns, "column_types": list(t.column_types),
                          "origins": t.origins.astype(float).tolist()}
    return out
