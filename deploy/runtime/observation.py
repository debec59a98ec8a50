"""The policy's observation built from the ONNX file's metadata alone, as the training env builds it.

Term order and sizes from ``obs_layout``, scales from ``obs_scales``, the ``joint_pos`` offset from
``default_joint_pos``, the scan's offset and clip from ``height_scan``; joints matched by name between the robot's
order and the policy's ``joint_names`` (optionally through a ``joint_map``: robot name -> policy name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import numpy as np

from contract import terms
from contract.errors import UserError
from deploy.runtime.robot import RobotState


def policy_order(policy_joints: Sequence[str], robot_joints: Sequence[str],
                 joint_map: Optional[Mapping[str, str]] = None, what: str = "joint(s)") -> np.ndarray:
    """``index[i]``: the robot-order position of the policy's joint ``i``. One-line UserError on a joint the robot
    lacks (or has twice), naming the robot's joints (``what``: how the line names the policy's joints)."""
    names = [joint_map.get(n, n) if joint_map else n for n in robot_joints]
    missing = [n for n in policy_joints if names.count(n) != 1]
    if missing:
        raise UserError(f"robot joints: the policy's {what} {', '.join(missing)} are not exactly once among the "
                        f"robot's ({', '.join(names)}); name them in joint_map (robot name -> policy name)")
    return np.array([names.index(n) for n in policy_joints], dtype=np.int64)


class ObservationBuilder:
    """``builder(state, commands, last_actions) -> float32 [obs_dim]`` for one robot."""

    def __init__(self, meta: dict[str, Any], robot_joints: Sequence[str],
                 joint_map: Optional[Mapping[str, str]] = None):
        self.layout = [(str(name), int(n)) for name, n in meta["obs_layout"]]
        unknown = [name for name, _ in self.layout if name not in terms.FROM_READING]
        if unknown:
            raise UserError(f"runtime: observation term(s) {', '.join(unknown)} are not known; known: "
                            f"{', '.join(terms.FROM_READING)}")
        self.index = policy_order(meta["joint_names"], robot_joints, joint_map)
        """Robot-order position of each policy joint."""
        self.constants = terms.Constants.of(meta)
        self.scales = {name: np.asarray(v, dtype=np.float64) for name, v in meta["obs_scales"].items()}
        self.names = {name for name, _ in self.layout}
        self.scan = meta.get("height_scan") if "height_scan" in self.names else None
        if "height_scan" in self.names and self.scan is None:
            raise UserError(f"runtime: the observation has a height_scan but the metadata no height_scan grid; "
                            f"re-export the policy ({meta.get('task')})")
        self.obs_dim = int(meta["obs_dim"])

    def scan_points(self) -> np.ndarray:
        """``[P, 2]`` scan points (m) in the base's yaw frame (x forward, y left), x-major: where the robot's
        ``height_scan`` must be sampled (empty without a scan)."""
        if self.scan is None:
            return np.zeros((0, 2))
        c = self.scan

        def axis(size: float, n: int) -> np.ndarray:
            return np.linspace(-size / 2, size / 2, n) if n > 1 else np.zeros(1)

        gx, gy = np.meshgrid(axis(c["size_x"], c["points_x"]), axis(c["size_y"], c["points_y"]), indexing="ij")
        return np.stack([gx.ravel(), gy.ravel()], 1)

    def values(self, state: RobotState, commands: np.ndarray, last_actions: np.ndarray) -> dict[str, np.ndarray]:
        """Each term before its scale (float64, ``contract.terms``)."""
        i = self.index
        reading = terms.Reading(
            joint_pos=np.asarray(state.joint_pos, dtype=np.float64)[i],
            joint_vel=np.asarray(state.joint_vel, dtype=np.float64)[i], imu_quat=state.imu_quat, gyro=state.gyro,
            commands=commands, last_actions=last_actions, base_lin_vel=state.base_lin_vel, heights=state.height_scan)
        return terms.values(self.names, reading, self.constants, "runtime")

    def __call__(self, state: RobotState, commands: np.ndarray, last_actions: np.ndarray) -> np.ndarray:
        v = self.values(state, commands, last_actions)
        parts = []
        for name, n in self.layout:
            x = v[name] * self.scales.get(name, 1.0)
            if x.shape != (n,):
                raise UserError(f"runtime: observation term {name} has {x.size} values, the policy expects {n}")
            parts.append(x)
        return np.concatenate(parts).astype(np.float32)
