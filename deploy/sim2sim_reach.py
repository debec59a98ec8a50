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
from deploy.onnx_policy import OnnxPolicy
from deploy.sim2sim import load_scene

TERMS = ("joint_pos", "joint_vel", "target_pos", "to_target", "last_actions")
"""Observation terms this check knows how to build."""


class PlainMujocoArm:
    """One ``MjData`` stepped at the control rate, actions turned into position-servo targets."""

    def __init__(self, meta: dict[str, Any]):
        self.meta = meta
        self.model = load_scene(meta)
        self.data = mujoco.MjData(self.model)
        if abs(self.model.opt.timestep - meta["sim_dt"]) > 1e-12:
            raise UserError(f"sim2sim: the stored scene has timestep {self.model.opt.timestep}, the policy was "
                            f"trained with {meta['sim_dt']}")
        for name, _ in meta["obs_layout"]:
            if name not in TERMS:
                raise UserError(f"sim2sim: observation term '{name}' is not known; known: {', '.join(TERMS)}")
        joints = [self.model.joint(name) for name in meta["joint_names"]]
        self.qpos_adr = np.array([j.qposadr[0] for j in joints])
        self.dof_adr = np.array([j.dofadr[0] for j in joints])
        by_joint = {int(self.model.actuator_trnid[a, 0]): a for a in range(self.model.nu)}
        self.actuators = np.array([by_joint[j.id] for j in joints])
        self.limits = np.array(meta["joint_pos_limits"], dtype=np.float64)
        self.tip = self.model.site(meta["fingertip_site"]).id
        self.default = np.array(meta["default_joint_pos"], dtype=np.float64)
        self.action_scale = np.array(meta["action_scale"], dtype=np.float64)
        self.scales = {name: np.asarray(v, dtype=np.float64) for name, v in meta["obs_scales"].items()}
        self.base_pos = np.array(meta["base_pos"], dtype=np.float64)
        self.base_rot = np.array(meta["base_rot"], dtype=np.float64).reshape(3, 3)
        self.last_action = np.zeros(len(joints))
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

    def observe(self) -> np.ndarray:
        values = {"joint_pos": self.data.qpos[self.qpos_adr] - self.default, "joint_vel": self.data.qvel[self.dof_adr],
                  "target_pos": self.base_rot.T @ (self.target - self.base_pos),
                  "to_target": self.base_rot.T @ (self.target - self.fingertip()), "last_actions": self.last_action}
        return np.concatenate([values[name] * self.scales.get(name, 1.0) for name, _ in self.meta["obs_layout"]])

    def act(self, action: np.ndarray) -> None:
        """Servo targets from ``action``, held for ``decimation`` physics steps."""
        limit = float(self.meta["action_clip"])
        self.last_action = np.clip(np.asarray(action, dtype=np.float64), -limit, limit)
        self.data.ctrl[self.actuators] = self.default + self.action_scale * self.last_action
        mujoco.mj_step(self.model, self.data, nstep=int(self.meta["decimation"]))
        mujoco.mj_kinematics(self.model, self.data)  # site positions of the state after the step

    def finite(self) -> bool:
        return bool(np.isfinite(self.data.qpos).all() and np.isfinite(self.data.qvel).all())


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
