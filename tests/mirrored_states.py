"""A locomotion env's state and its mirror image, built from physical quantities (not from an observation), for the
tests that the env's mirror of every observation group is the observation of the mirrored state."""

from __future__ import annotations

import torch

from envs.robots.mirror import joint_mirror
from envs.tasks.locomotion import LocomotionEnv
from rl_core.env_api import Obs

VECTOR = torch.tensor([1.0, -1.0, 1.0])
"""A vector mirrored across the sagittal (x-z) plane: (x, -y, z)."""
AXIAL = torch.tensor([-1.0, 1.0, -1.0])
"""An angular velocity mirrored: (-x, y, -z)."""
QUAT = torch.tensor([1.0, -1.0, 1.0, -1.0])
"""A rotation (w, x, y, z) mirrored: M R M with M = diag(1, -1, 1) is (w, -x, y, -z)."""
COMMAND = torch.tensor([1.0, -1.0, -1.0])
"""A velocity command (vx, vy, yaw rate) mirrored."""


def mirrored_pair(env: LocomotionEnv, seed: int = 0) -> Obs:
    """Env 0 in a random state (tilted, moving, turning, joints off the default pose and moving, a command, a last
    action, the privileged critic's values), env 1 in its mirror image, the other envs as reset; their observation.
    The env needs no observation noise and at least 2 envs; the history frames before are zeros."""
    g = torch.Generator().manual_seed(seed)
    env.reset(seed=seed)
    rb, adr = env.robot, env.adr
    joints = joint_mirror(rb.joint_names, rb.spec.mirror)
    r = env.physics.read()
    qpos, qvel = r.qpos.clone(), torch.zeros_like(r.qvel)
    qpos[1] = qpos[0]
    quat = torch.cat([torch.ones(1), 0.15 * torch.randn(3, generator=g)])
    qpos[0, adr.base_quat], qpos[1, adr.base_quat] = quat / quat.norm(), QUAT * quat / quat.norm()
    qpos[1, adr.base_pos] = VECTOR * qpos[0, adr.base_pos]
    pose = env.default_joint_pos + 0.2 * torch.randn(rb.num_joints, generator=g)
    qpos[0, adr.joint_qpos], qpos[1, adr.joint_qpos] = pose, joints(pose)  # the default pose is its own mirror
    speed = torch.randn(rb.num_joints, generator=g)
    qvel[0, adr.joint_dof], qvel[1, adr.joint_dof] = speed, joints(speed)
    lin, ang = 0.5 * torch.randn(3, generator=g), 0.5 * torch.randn(3, generator=g)
    qvel[0, adr.base_linvel], qvel[1, adr.base_linvel] = lin, VECTOR * lin
    qvel[0, adr.base_angvel], qvel[1, adr.base_angvel] = ang, AXIAL * ang
    rows = torch.zeros(env.num_envs, dtype=torch.bool)
    rows[:2] = True
    env.physics.reset(rows, qpos, qvel)
    command = torch.tensor([0.6, 0.3, 0.7])
    env.commands[0], env.commands[1] = command, COMMAND * command
    action = torch.randn(rb.num_joints, generator=g)
    env.state.last_actions[0], env.state.last_actions[1] = action, joints(action)
    env.state.past_frames.zero_()
    env.state.privileged[:2] = torch.tensor([0.7, 1.3, 1.05])  # friction, added mass, gain factor: the same
    return env.observe(env.physics.read())
