"""A velocity-tracking step's quantities: the named view of a readout, the height above the ground, the heading's
steering, the feet's contacts, the reward context, the tracking errors, and the state a step leaves (parts
of ``envs/tasks/parts.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from envs.physics.base import PhysicsReadout
from envs.tasks.locomotion import rewards
from envs.tasks.locomotion.commands import Commands
from envs.tasks.locomotion.config import LocomotionEnvConfig
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.locomotion.step import Addresses, Step
from envs.terrain.ground import Ground

WRITES = ("last_actions", "last_joint_vel")
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""


@dataclass(frozen=True)
class Measured:
    """What the parts of one velocity-tracking step share."""

    s: Step
    base_height: torch.Tensor
    """Base height above the ground below it ``[N]`` (m)."""
    context: rewards.Context
    commands: torch.Tensor
    """The commands this step tracked ``[N, 3]`` (resampling and resets replace the state's tensor)."""
    lin_err: torch.Tensor
    """Linear velocity tracking error ``[N]`` (m/s)."""
    yaw_err: torch.Tensor
    """Yaw rate tracking error ``[N]`` (rad/s)."""


@dataclass(frozen=True)
class Robot:
    """What the measure reads of the robot: its readout columns and the reward terms' inputs."""

    adr: Addresses
    """Readout columns by meaning."""
    num_feet: int
    held: bool
    """The robot has held joints."""
    default_joint_pos: torch.Tensor
    """``[J]`` rad."""
    deviation: torch.Tensor
    """Columns of the ``reward_params.deviation_joints``."""
    constants: rewards.Constants
    """What the reward terms read that never changes."""


class Measure:
    """The step's quantities of ``robot`` on ``ground`` tracking ``state``'s commands."""

    def __init__(self, cfg: LocomotionEnvConfig, state: LocomotionState, ground: Ground, commands: Commands,
                 robot: Robot):
        self.cfg, self.state, self.ground, self.commands, self.robot = cfg, state, ground, commands, robot

    def view(self, r: PhysicsReadout) -> Step:
        """The named quantities of a readout."""
        rb = self.robot
        return Step(r, rb.adr, rb.num_feet, rb.held)

    def measure(self, s: Step, actions: torch.Tensor) -> Measured:
        """Height above the ground, steering towards the heading, the feet's contacts, the reward context, the
        tracking errors."""
        base_height = s.base_z - self.ground.height(s.base_xy)  # above the ground below
        if self.cfg.commands.heading:
            self.commands.steer(self.state, s.yaw)  # the step's yaw, shared with the height scan
        x = self._context(s, actions, base_height)
        commands = self.state.commands  # the commands this step tracked
        lin_err = torch.norm(commands[:, :2] - s.lin_vel_b[:, :2], dim=1)
        yaw_err = torch.abs(commands[:, 2] - s.ang_vel_b[:, 2])
        return Measured(s, base_height, x, commands, lin_err, yaw_err)

    def reward_context(self, q: Measured, actions: torch.Tensor) -> rewards.Context:
        return q.context

    def after_step(self, q: Measured, actions: torch.Tensor) -> None:
        """This step's actions and joint velocities become the last ones."""
        state = self.state
        state.last_actions = actions
        state.last_joint_vel = q.s.joint_vel

    def _context(self, s: Step, actions: torch.Tensor, base_height: torch.Tensor) -> rewards.Context:
        """The reward terms' context of this step (the stateful terms' state moves after it: the task base)."""
        state, thr, rb = self.state, self.cfg.contact_force_threshold, self.robot
        contact = s.foot_force > thr
        joint_offset = (s.joint_pos - rb.default_joint_pos)[:, rb.deviation]
        return rewards.Context(
            s=s, state=state, actions=actions, contact=contact, penalized_contact=s.penalized_force > thr,
            base_height=base_height, joint_offset=joint_offset, k=rb.constants)
