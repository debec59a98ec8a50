"""What every plain-MuJoCo sim2sim family shares: the scene stored in the policy file (``scene_mjb``) in one
``MjData``, the policy's joints and their servos found by name, actions turned into servo targets held for
``decimation`` physics steps, the observation as the layout's terms times their scales, and the sensor reading a
robot with a floating base would have (``contract.terms.Reading``). A family (``deploy/sim2sim*.py``) adds its
observation values, resets and metrics."""

from __future__ import annotations

import base64
import zlib
from typing import Any

import mujoco
import numpy as np

from contract import terms
from contract.errors import UserError


def load_scene(meta: dict[str, Any]) -> mujoco.MjModel:
    """The compiled scene stored in the metadata (``scene_mjb``: zlib-compressed MJB, base64)."""
    if "scene_mjb" not in meta:
        raise UserError("sim2sim: this policy file carries no scene (metadata scene_mjb; files exported before scenes "
                        "were stored name a robot_xml instead); re-export it with play.py --checkpoint RUN "
                        "--export-onnx")
    mjb = zlib.decompress(base64.b64decode(meta["scene_mjb"]))
    return mujoco.MjModel.from_binary_path("scene.mjb", {"scene.mjb": mjb})


class PlainMujoco:
    """One ``MjData`` of the stored scene stepped at the control rate, actions turned into position-servo targets
    of the policy's joints; with a floating base (metadata ``base_joint``), its body-frame velocities and reading."""

    def __init__(self, meta: dict[str, Any]):
        self.meta = meta
        self.model = load_scene(meta)
        self.data = mujoco.MjData(self.model)
        if abs(self.model.opt.timestep - meta["sim_dt"]) > 1e-12:
            raise UserError(f"sim2sim: the stored scene has timestep {self.model.opt.timestep}, the policy was trained "
                            f"with {meta['sim_dt']}")
        self.base_q = self.base_v = -1  # no floating base (a fixed arm)
        if "base_joint" in meta:
            base = self.model.joint(meta["base_joint"])
            if base.type[0] != mujoco.mjtJoint.mjJNT_FREE:
                raise UserError(f"sim2sim: the base joint {meta['base_joint']!r} of the stored scene is not free")
            self.base_q, self.base_v = int(base.qposadr[0]), int(base.dofadr[0])
        joints = [self.model.joint(name) for name in meta["joint_names"]]
        self.qpos_adr = np.array([j.qposadr[0] for j in joints])
        self.dof_adr = np.array([j.dofadr[0] for j in joints])
        self.actuator_of = {int(self.model.actuator_trnid[a, 0]): a for a in range(self.model.nu)}
        """Joint id -> the actuator that drives it."""
        self.actuators = np.array([self.actuator_of[j.id] for j in joints])
        self.default = np.asarray(meta["default_joint_pos"], dtype=np.float64)
        self.action_scale = np.asarray(meta["action_scale"], dtype=np.float64)  # per joint (schema.upgrade: major 1)
        self.scales = {name: np.asarray(v, dtype=np.float64) for name, v in meta["obs_scales"].items()}
        self.names = [str(name) for name, _ in meta["obs_layout"]]
        self.last_action = np.zeros(len(joints))
        self.commands = np.zeros(3)
        """The velocity command a reading reports (vx, vy, yaw rate; zeros for a family without commands)."""

    def values(self) -> dict[str, np.ndarray]:
        """Each observation term's raw value (the family's)."""
        raise NotImplementedError

    def observe(self) -> np.ndarray:
        """The observation the policy reads: each term of the layout times its scale, in order."""
        values = self.values()
        return np.concatenate([values[name] * self.scales.get(name, 1.0) for name in self.names])

    def act(self, action: np.ndarray) -> None:
        """Servo targets from ``action`` (clipped to ``action_clip``), held for ``decimation`` physics steps; then the
        poses of the bodies and sites in the state after the steps."""
        clip = self.meta["action_clip"]
        self.last_action = np.clip(np.asarray(action, dtype=np.float64), -clip, clip)
        self.data.ctrl[self.actuators] = self.default + self.action_scale * self.last_action
        mujoco.mj_step(self.model, self.data, nstep=int(self.meta["decimation"]))
        mujoco.mj_kinematics(self.model, self.data)

    def finite(self) -> bool:
        return bool(np.isfinite(self.data.qpos).all() and np.isfinite(self.data.qvel).all())

    def body_frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Base linear velocity, angular velocity and gravity direction in the base frame."""
        rot = np.empty(9)
        b, v = self.base_q, self.base_v
        mujoco.mju_quat2Mat(rot, self.data.qpos[b + 3:b + 7])
        rot3 = rot.reshape(3, 3)  # body -> world
        return rot3.T @ self.data.qvel[v:v + 3], self.data.qvel[v + 3:v + 6].copy(), rot3.T @ np.array([0.0, 0.0, -1.0])

    def heights(self) -> np.ndarray | None:
        """The height scan a reading carries (None: the family has none)."""
        return None

    def reading(self) -> terms.Reading:
        """What the robot's sensors would read now (``contract.terms.Reading``), with the true base velocity and
        heights (the estimator and perception a robot would need for them)."""
        b = self.base_q
        lin, ang, _ = self.body_frame()
        return terms.Reading(joint_pos=self.data.qpos[self.qpos_adr], joint_vel=self.data.qvel[self.dof_adr],
                             imu_quat=self.data.qpos[b + 3:b + 7], gyro=ang, commands=self.commands,
                             last_actions=self.last_action, base_lin_vel=lin, heights=self.heights())
