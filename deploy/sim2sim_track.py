"""Sim-to-sim check of an exported tracking policy: one plain MuJoCo simulation, from the ONNX file alone.

Everything comes from the metadata (``task_family: track``, schema ``contract/schema.py``): the compiled scene
(``scene_mjb``), the joints by name, servos, action scale and clip, control period, observation layout and scales,
and the clips themselves (``motion_clips``: each at the control rate in our clip format, ``contract/motion.py``)
with how the policy reads them (``motion``: anchor body, frames ahead, termination bands, phase). The reference is
replayed here in the stored scene (``mj_kinematics`` per frame, velocities by ``contract.motion.velocities``), so
no training code runs. No torch, no batching, no observation noise, no start noise.

Episode ``k`` plays clip ``k % len(clips)`` from a start frame drawn uniformly over the clip (all but its last
frame), the robot put in the reference's state there; it ends at the clip's last frame or ``episode_length_s``
(time-outs), when the anchor's height or tilt leaves its band (a fall), or when the physics turns non-finite
(counted apart). The metrics match ``play.py``'s: ``joint_pos_error`` (mean absolute joint angle difference, rad)
and ``anchor_pos_error`` (m) averaged over each episode's steps, then over episodes; ``fall_rate``;
``clip_end``: the share of episodes that reached their clip's last frame.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from contract import motion, terms
from contract.errors import UserError
from contract.families import Family, Key
from deploy.onnx_policy import OnnxPolicy
from deploy.plain_mujoco import PlainMujoco

MOTION_TERMS = ("motion_joint_pos", "motion_joint_vel", "motion_anchor_pos", "motion_anchor_ori", "motion_phase")
"""The tracking terms built here (the others come from a robot's reading, ``contract/terms.py``)."""
RUNTIME = "plain MuJoCo"
"""Where ``run`` plays a file (``apps/sim2sim.py`` names it)."""
FAMILY = Family(
    "track", "a robot reproducing motion clips",
    keys=(
        Key("motion_clips", "list[object]", "", "since 2.3: the clips, one per env in turn: `name`, `source` (as "
            "configured), `sha256` (of the clip as read), `fps` (the control rate), `frames`, `npz` (the clip at the "
            "control rate in the legged-mjx motion format, contract/motion.py: zlib-compressed .npz bytes, base64)"),
        Key("motion", "object", "m, 1", "since 2.3: how the policy reads its clip: `anchor_body` (scene body of the "
            "`motion_anchor_*` terms), `future_frames` (frames ahead in `motion_joint_*`), `anchor_height_band` (m) "
            "and `anchor_tilt_band` (an episode fails beyond them), `phase` (how `motion_phase` is computed)"),
    ),
    carries=(
        "robot", "scene_mjb", "base_joint", "obs_layout", "obs_scales", "joint_names", "default_joint_pos",
        "joint_pos_limits", "action_scale", "velocity_limits", "action_clip", "kp", "kd", "torque_limits",
        "control_dt", "sim_dt", "decimation", "episode_length_s",
    ),
)
"""This module plays the family's exported files (``contract/families.py`` reads the declaration)."""


@dataclass(frozen=True)
class Reference:
    """One clip replayed in the stored scene (float64)."""

    name: str
    qpos: np.ndarray
    """``[F, nq]``."""
    qvel: np.ndarray
    """``[F, nv]``."""
    joint_pos: np.ndarray
    """``[F, J]`` the policy's joints."""
    joint_vel: np.ndarray
    """``[F, J]``."""
    anchor_pos: np.ndarray
    """``[F, 3]``."""
    anchor_rot: np.ndarray
    """``[F, 3, 3]``."""

    @property
    def last(self) -> int:
        return int(self.qpos.shape[0]) - 1


def replay(model: mujoco.MjModel, clip: motion.Clip, joint_names: list[str], anchor: int) -> Reference:
    """``clip`` in ``model``: its frames' states and the anchor's poses (the clip names every joint of the scene)."""
    free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE][0]
    rates = motion.velocities(clip)
    F = clip.frames
    qpos, qvel = np.tile(model.qpos0, (F, 1)), np.zeros((F, model.nv))
    q0, v0 = int(model.jnt_qposadr[free]), int(model.jnt_dofadr[free])
    qpos[:, q0:q0 + 3], qpos[:, q0 + 3:q0 + 7] = clip.base_pos, clip.base_quat
    qvel[:, v0:v0 + 3], qvel[:, v0 + 3:v0 + 6] = rates.base_lin_vel, rates.base_ang_vel
    for col, name in enumerate(clip.joint_names):
        j = model.joint(name)
        qpos[:, j.qposadr[0]], qvel[:, j.dofadr[0]] = clip.joint_pos[:, col], rates.joint_vel[:, col]
    data = mujoco.MjData(model)
    pos, rot = np.zeros((F, 3)), np.zeros((F, 3, 3))
    for f in range(F):
        data.qpos[:] = qpos[f]
        mujoco.mj_kinematics(model, data)
        pos[f], rot[f] = data.xpos[anchor], data.xmat[anchor].reshape(3, 3)
    cols = [clip.joint_names.index(n) for n in joint_names]
    return Reference(clip.name, qpos, qvel, clip.joint_pos[:, cols], rates.joint_vel[:, cols], pos, rot)


def clips_of(meta: dict[str, Any]) -> list[motion.Clip]:
    """The clips stored in the metadata (``motion_clips``)."""
    return [motion.from_bytes(zlib.decompress(base64.b64decode(c["npz"])), f"metadata motion_clips[{i}]", c["name"])
            for i, c in enumerate(meta["motion_clips"])]


class PlainMujocoTracker(PlainMujoco):
    """A robot with its reference: the clips replayed in the stored scene, the frame it is at."""

    def __init__(self, meta: dict[str, Any]):
        super().__init__(meta)
        unknown = [n for n in self.names if n not in MOTION_TERMS and n not in terms.FROM_READING]
        if unknown:
            raise UserError(f"sim2sim: observation term(s) {', '.join(unknown)} are not built here; built: "
                            f"{', '.join(MOTION_TERMS + terms.FROM_READING)}")
        self.constants = terms.Constants.of(meta)
        self.anchor = self.model.body(meta["motion"]["anchor_body"]).id
        self.refs = [replay(self.model, c, list(meta["joint_names"]), self.anchor) for c in clips_of(meta)]
        self.ref, self.frame = self.refs[0], 0

    def reset(self, ref: Reference, frame: int) -> None:
        """In ``ref``'s state at ``frame``."""
        mujoco.mj_resetData(self.model, self.data)
        self.ref, self.frame = ref, frame
        self.data.qpos[:], self.data.qvel[:] = ref.qpos[frame], ref.qvel[frame]
        self.data.ctrl[self.actuators] = ref.joint_pos[frame]
        mujoco.mj_forward(self.model, self.data)
        self.last_action[:] = 0.0

    def motion_values(self) -> dict[str, np.ndarray]:
        """The tracking terms (``envs/tasks/track/observations.py``'s values, in numpy)."""
        ref, k = self.ref, int(self.meta["motion"]["future_frames"])
        ahead = np.minimum(self.frame + np.arange(1, k + 1), ref.last)
        a_pos, a_rot = self.data.xpos[self.anchor], self.data.xmat[self.anchor].reshape(3, 3)
        nxt = ahead[0]
        rel = a_rot.T @ ref.anchor_rot[nxt]
        return {"motion_joint_pos": (ref.joint_pos[ahead] - self.default).reshape(-1),
                "motion_joint_vel": ref.joint_vel[ahead].reshape(-1),
                "motion_anchor_pos": a_rot.T @ (ref.anchor_pos[nxt] - a_pos),
                "motion_anchor_ori": rel[:, :2].T.reshape(-1), "motion_phase": np.array([self.frame / ref.last])}

    def values(self) -> dict[str, np.ndarray]:
        """The robot's terms from its reading (``contract/terms.py``) and the tracking terms."""
        robot = [n for n in self.names if n not in MOTION_TERMS]
        return {**terms.values(robot, self.reading(), self.constants, "sim2sim"), **self.motion_values()}

    def act(self, action: np.ndarray) -> None:
        """``PlainMujoco.act``; the reference moves one frame on."""
        super().act(action)
        self.frame += 1

    def errors(self) -> tuple[float, float, bool]:
        """Joint-position error (mean absolute, rad), anchor position error (m) and whether the anchor left its
        bands, against the reference's current frame."""
        ref, f, m = self.ref, min(self.frame, self.ref.last), self.meta["motion"]
        a_pos, a_rot = self.data.xpos[self.anchor], self.data.xmat[self.anchor].reshape(3, 3)
        joint = float(np.abs(self.data.qpos[self.qpos_adr] - ref.joint_pos[f]).mean())
        fell = (abs(a_pos[2] - ref.anchor_pos[f, 2]) > m["anchor_height_band"]
                or abs(a_rot[2, 2] - ref.anchor_rot[f, 2, 2]) > m["anchor_tilt_band"])
        return joint, float(np.linalg.norm(a_pos - ref.anchor_pos[f])), bool(fell)


def run(policy: OnnxPolicy, episodes: int, seed: int) -> dict[str, Any]:
    """Evaluate ``policy`` for ``episodes`` episodes in plain MuJoCo; returns play.py's tracking metrics."""
    meta = policy.metadata
    robot = PlainMujocoTracker(meta)
    rng = np.random.default_rng(seed)
    limit = int(np.ceil(meta["episode_length_s"] / meta["control_dt"]))
    joint_means, anchor_means, lengths, falls, ends, diverged = [], [], [], [], [], 0
    for k in range(episodes):
        ref = robot.refs[k % len(robot.refs)]
        robot.reset(ref, int(rng.integers(0, ref.last)))
        policy.reset()
        joint_sum = anchor_sum = 0.0
        t, fell, ok = 0, False, True
        while t < limit and robot.frame < ref.last and not fell and ok:
            robot.act(policy(robot.observe())[0])
            t += 1
            ok = robot.finite()
            if ok:
                joint, anchor, fell = robot.errors()
                joint_sum, anchor_sum = joint_sum + joint, anchor_sum + anchor
        if not ok:
            diverged += 1
            continue
        joint_means.append(joint_sum / t)
        anchor_means.append(anchor_sum / t)
        lengths.append(t)
        falls.append(float(fell))
        ends.append(float(robot.frame >= ref.last and not fell))
    done = len(lengths)
    mean = (lambda x: float(np.mean(x)) if done else float("nan"))  # noqa: E731
    return {"episodes": done, "diverged_episodes": diverged, "mean_episode_length": mean(lengths),
            "fall_rate": mean(falls), "joint_pos_error": mean(joint_means), "anchor_pos_error": mean(anchor_means),
            "clip_end": mean(ends)}
