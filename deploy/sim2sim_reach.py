"""Sim-to-sim check of an exported reaching policy: one plain MuJoCo simulation, from the ONNX file alone.

Everything comes from the metadata (``task_family: reach``, schema ``contract/schema.py``): the compiled scene
(``scene_mjb``), the joints by name, default pose, action scale and clip, control period, the observation
layout and scales, the base frame, the fingertip site and the target ranges. No torch, no batching, no
observation noise. Each episode starts at the default pose plus a uniform offset of ``init_joint_noise`` (within
the joint limits), draws a target around ``shoulder_pos`` in ``target_ranges`` and redraws it every
``resample_s``; it ends at ``episode_length_s`` or when the physics turns non-finite (counted apart, no success).
The metrics match ``play.py``'s: ``distance`` averaged over each episode's steps, then over episodes;
``final_distance`` at the last step; ``success``: the share of episodes that end within ``success_radius``.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from contract.errors import UserError
from contract.families import Family, Key
from deploy.onnx_policy import OnnxPolicy
from deploy.plain_mujoco import PlainMujoco

TERMS = ("joint_pos", "joint_vel", "target_pos", "to_target", "last_actions")
"""Observation terms this check knows how to build."""
RUNTIME = "plain MuJoCo"
"""Where ``run`` plays a file (``apps/sim2sim.py`` names it)."""
FAMILY = Family(
    "reach", "a fixed-base arm reaching targets",
    keys=(
        Key("fingertip_site", "str", "", "the scene's site that reaches the target"),
        Key("target_site", "str", "", "the scene's visual-only site that shows the target"),
        Key("base_pos", "list[number]", "m", "origin of the base frame (world): `target_pos` is "
            "`base_rot^T (target - base_pos)`"),
        Key("base_rot", "list[number]", "", "base-to-world rotation, 9 numbers row-major; `to_target` is "
            "`base_rot^T (target - fingertip)`"),
        Key("shoulder_pos", "list[number]", "m", "centre the targets are drawn around (world)"),
        Key("target_ranges", "object", "m, rad, s", "`radius` (m), `azimuth`, `elevation` (rad) `[low, high]` around "
            "`shoulder_pos`, `min_height` (m, targets lower are lifted), `resample_s` (a new target this often)"),
        Key("success_radius", "number", "m", "an episode ending with the fingertip this close to its target is a "
            "success"),
        Key("init_joint_noise", "number", "rad", "episodes start at `default_joint_pos` plus a uniform offset of "
            "this half-width"),
    ),
    carries=(
        "robot", "scene_mjb", "obs_layout", "obs_scales", "joint_names", "default_joint_pos", "joint_pos_limits",
        "action_scale", "action_clip", "kp", "kd", "torque_limits", "control_dt", "sim_dt", "decimation",
        "episode_length_s",
    ),
)
"""This module plays the family's exported files (``contract/families.py`` reads the declaration)."""


class PlainMujocoArm(PlainMujoco):
    """A fixed-base arm: its fingertip site and the target it reaches for."""

    def __init__(self, meta: dict[str, Any]):
        super().__init__(meta)
        for name in self.names:
            if name not in TERMS:
                raise UserError(f"sim2sim: observation term '{name}' is not known; known: {', '.join(TERMS)}")
        self.limits = np.array(meta["joint_pos_limits"], dtype=np.float64)
        self.tip = self.model.site(meta["fingertip_site"]).id
        self.base_pos = np.array(meta["base_pos"], dtype=np.float64)
        self.base_rot = np.array(meta["base_rot"], dtype=np.float64).reshape(3, 3)
        self.target = np.zeros(3)

    def reset(self, joints: np.ndarray) -> None:
        """At rest with the joints at ``joints`` (clipped to their limits)."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.qpos_adr] = np.clip(joints, self.limits[:, 0], self.limits[:, 1])
        mujoco.mj_forward(self.model, self.data)
        self.last_action[:] = 0.0

    def fingertip(self) -> np.ndarray:
        return self.data.site_xpos[self.tip].copy()

    def distance(self) -> float:
        return float(np.linalg.norm(self.target - self.fingertip()))

    def values(self) -> dict[str, np.ndarray]:
        return {"joint_pos": self.data.qpos[self.qpos_adr] - self.default, "joint_vel": self.data.qvel[self.dof_adr],
                "target_pos": self.base_rot.T @ (self.target - self.base_pos),
                "to_target": self.base_rot.T @ (self.target - self.fingertip()), "last_actions": self.last_action}


def draw_target(rng: np.random.Generator, meta: dict[str, Any]) -> np.ndarray:
    """A target around ``shoulder_pos`` in ``target_ranges`` (the training distribution)."""
    c = meta["target_ranges"]
    r, az, el = rng.uniform(*c["radius"]), rng.uniform(*c["azimuth"]), rng.uniform(*c["elevation"])
    point = np.array(meta["shoulder_pos"]) + r * np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az),
                                                           np.sin(el)])
    point[2] = max(point[2], c["min_height"])
    return point


def run(policy: OnnxPolicy, episodes: int, seed: int) -> dict[str, Any]:
    """Evaluate ``policy`` for ``episodes`` episodes in plain MuJoCo; returns play.py's reach metrics."""
    meta = policy.metadata
    arm = PlainMujocoArm(meta)
    rng = np.random.default_rng(seed)
    dt = meta["control_dt"]
    max_steps = int(np.ceil(meta["episode_length_s"] / dt))  # as the training env counts them
    resample = max(1, round(meta["target_ranges"]["resample_s"] / dt))
    noise = meta["init_joint_noise"]
    means, finals, diverged = [], [], 0
    for _ in range(episodes):
        arm.reset(arm.default + rng.uniform(-noise, noise, len(arm.default)))
        arm.target = draw_target(rng, meta)
        policy.reset()
        total, t, ok = 0.0, 0, True
        while t < max_steps and ok:
            arm.act(policy(arm.observe())[0])
            t += 1
            ok = arm.finite()
            d = arm.distance()
            total += d
            if t % resample == 0 and t < max_steps:
                arm.target = draw_target(rng, meta)
        if not ok:
            diverged += 1
            continue
        means.append(total / t)
        finals.append(d)
    finals_a = np.array(finals)
    return {"episodes": len(finals), "diverged_episodes": diverged, "mean_episode_length": float(max_steps),
            "distance": float(np.mean(means)) if means else float("nan"),
            "final_distance": float(np.mean(finals_a)) if finals else float("nan"),
            "success": float(np.mean(finals_a <= meta["success_radius"])) if finals else float("nan")}
