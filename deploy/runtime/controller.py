"""One control tick, without the clock: sensor sample -> observation -> policy -> safety -> joint command.

Everything comes from the ONNX file's metadata: the observation (``observation.py``), the recurrent state
(``OnnxPolicy`` carries it), ``target = default_joint_pos + action_scale * clip(action, -action_clip,
action_clip)``, the gains ``kp`` / ``kd``, the limits (``safety.py``). Joints held outside the action space
(``held_joint_names``) are commanded every tick too, to ``held_joint_pos`` with ``held_kp`` / ``held_kd`` (the
safety mode decides, as for the trained joints); the robot's other joints stay limp. Arrays cross to and from the
robot in its own joint order, matched by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

import numpy as np

from contract import schema
from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.observation import ObservationBuilder, policy_order
from deploy.runtime.robot import JointCommand, RobotState
from deploy.runtime.safety import Safety, SafetyConfig
from deploy.runtime.supply import Supplies, check


class Controller:
    """The policy of one robot; ``tick(state, now, commands)`` -> the command to write (robot order)."""

    def __init__(self, policy: OnnxPolicy, robot_joints: Sequence[str], safety: Optional[SafetyConfig] = None,
                 joint_map: Optional[Mapping[str, str]] = None, supplies: Optional[Supplies] = None):
        """``supplies``: what the robot gives (``supply.py``); a policy observing more is refused in one line
        (None: not checked here; a missing value then stops the first tick)."""
        meta = policy.metadata
        if schema.family(meta) != "locomotion":
            raise UserError(f"runtime: policy of task {meta.get('task')!r} is not a locomotion policy (metadata "
                            f"task_family {schema.family(meta)!r}); the runtime drives legged robots")
        if supplies is not None:
            check(meta, supplies)
        self.policy, self.meta = policy, meta
        self.obs = ObservationBuilder(meta, robot_joints, joint_map)
        self.index = self.obs.index
        self.n_robot = len(robot_joints)
        self.dt = float(meta["control_dt"])
        self.safety = Safety(meta, safety or SafetyConfig(), self.dt, f"runtime: the policy of task {meta['task']!r}")
        held = policy_order(meta.get("held_joint_names", []), robot_joints, joint_map, "held joint(s)")
        self.driven = np.concatenate([self.index, held])
        """Robot-order position of each joint the command drives: the policy's joints, then the held ones."""
        self.scale = np.asarray(meta["action_scale"], dtype=np.float64)  # per joint, policy order
        self.clip = float(meta["action_clip"])
        self.default = np.asarray(meta["default_joint_pos"], dtype=np.float64)
        self.last_actions = np.zeros(len(self.default))
        self.last_obs: Optional[np.ndarray] = None

    def reset(self) -> None:
        """A new run: zero last actions and recurrent state (the safety mode stays latched)."""
        self.last_actions[:] = 0.0
        self.policy.reset()

    def warm_up(self, n: int = 5) -> None:
        """Run the policy on zeros ``n`` times (onnxruntime allocates on the first calls), then reset."""
        for _ in range(n):
            self.policy(np.zeros((1, self.obs.obs_dim), np.float32))
        self.reset()

    def observe(self, state: RobotState, commands: np.ndarray) -> np.ndarray:
        self.last_obs = self.obs(state, commands, self.last_actions)
        return self.last_obs

    def infer(self, obs: np.ndarray) -> np.ndarray:
        """The clipped action (policy order); remembered as the next observation's ``last_actions``."""
        action = np.asarray(self.policy(obs[None])[0], dtype=np.float64)
        self.last_actions = np.clip(action, -self.clip, self.clip)
        return self.last_actions

    def command(self, state: Optional[RobotState], action: Optional[np.ndarray]) -> Optional[JointCommand]:
        """The joint command for the robot (its order) from the action (None outside ``run``); None when there is
        no sample yet to hold a pose from."""
        if state is None:
            return None
        q = np.asarray(state.joint_pos, dtype=np.float64)[self.driven]
        qd = np.asarray(state.joint_vel, dtype=np.float64)[self.driven]
        target = None if action is None else self.default + self.scale * action
        t, kp, kd = self.safety.command(target, q, qd)
        out = JointCommand(np.asarray(state.joint_pos, dtype=np.float64).copy(), np.zeros(self.n_robot),
                           np.zeros(self.n_robot), np.zeros(self.n_robot))  # joints neither trained nor held: limp
        out.target[self.driven], out.kp[self.driven], out.kd[self.driven] = t, kp, kd
        return out

    def tick(self, state: Optional[RobotState], now: float, commands: np.ndarray) -> Optional[JointCommand]:
        """The whole tick (what ``loop.Runtime`` times in parts)."""
        self.safety.check(state, now)
        action = None
        if self.safety.mode == "run" and state is not None:
            action = self.infer(self.observe(state, commands))
        return self.command(state, action)
