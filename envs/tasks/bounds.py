"""Physical speed bounds of a robot: a world moving faster than them has diverged (it is reset, not learned from).

A legged robot's speeds are limited by its size. The bounds are derived from the compiled model, so any robot
gets its own, and are far beyond what the robot can do:

- base linear speed: ``BASE_FROUDE * sqrt(g * h)``, with ``h`` the base's standing height
  (``RobotSpec.base_height``), plus the largest push. ``v / sqrt(g h)`` is the dimensionless (Froude) speed of
  legged locomotion: walking stays below about 0.7, fast quadruped robots reach about 2.5-3, a galloping cheetah
  about 10 (30 m/s on 0.9 m legs). With the default 1 m/s pushes the built-in quadruped's bound is 10.0 m/s, the
  humanoid's 16.8 m/s; under random actions and a push every second their bases stay below 2.0 and 3.4 m/s
  (``tools/experiments/speed_census.py``).
- base angular speed: ``CHEETAH_FROUDE * sqrt(g * h)`` over ``h``: a base spinning faster moves a point at one
  base height from its centre faster than a cheetah runs (quadruped 57 rad/s, humanoid 32 rad/s; seen: 16 and
  10 rad/s: a tumble is fast).
- each joint: ``SWING_SPEED * CHEETAH_FROUDE * sqrt(g * h)`` over the reach of the joint's subtree (the farthest
  point of the bodies it moves, from its axis, in the model's reference pose): a joint spinning faster moves its
  foot faster than three times a cheetah's speed. A light foot on a short lever gets a high bound (the humanoid's
  ankles, 552 rad/s: a healthy 100 rad/s spike at a foot strike is within it), a long leg a lower one (the
  quadruped's hips 113 rad/s, calves 221 rad/s; seen: 22 and 30 rad/s).

Every bound is multiplied by ``margin`` (a config value; 1 by default). ``MAX_SANE_QVEL`` (1e3) still applies
to every generalized velocity. The observation bound of each column follows from these (``observation_bound``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np
import torch

BASE_FROUDE = 5.0
"""The largest dimensionless speed ``v / sqrt(g h)`` of the base: about twice what fast legged robots reach."""
CHEETAH_FROUDE = 10.0
"""A galloping cheetah's dimensionless speed: the reference of the angular and joint bounds."""
SWING_SPEED = 3.0
"""How much faster than the base's bound a foot may move relative to the base (joint bounds)."""
GRAVITY = 9.81


def every(mask: torch.Tensor) -> torch.Tensor:
    """``mask.all(dim=1)`` of a ``[N, k]`` bool mask, as a count: the same values, and on the CPU about 3x faster
    (torch's boolean ``all`` over a dimension took 130 us for ``[1024, 48]`` on one core, the count 40 us; the
    divergence and bound checks run it every step)."""
    return mask.sum(dim=1) == mask.shape[1]


@dataclass(frozen=True)
class SpeedBounds:
    """The speeds beyond which a world of this robot has diverged (world frame norms; joints in policy order)."""

    base_lin_vel: float
    """Base linear speed bound (m/s): BASE_FROUDE x sqrt(g x base height) + the largest push, x margin."""
    base_ang_vel: float
    """Base angular speed bound (rad/s): CHEETAH_FROUDE x sqrt(g x base height) over the base height, x margin."""
    joint_vel: tuple[float, ...]
    """Per actuated joint (rad/s, or m/s for a slide): SWING_SPEED x CHEETAH_FROUDE x sqrt(g x base height) over
    the reach of its subtree (a slide: not divided), x margin."""


def joint_reach(model: mujoco.MjModel, dof_adr: tuple[int, ...]) -> np.ndarray:
    """Per dof: the largest distance from the joint's axis anchor to a point of a collision or visual geom of the
    bodies it moves (geom centre + bounding radius), in the model's reference pose (qpos0)."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    reach = np.zeros(len(dof_adr))
    for i, dof in enumerate(dof_adr):
        jnt = int(model.dof_jntid[dof])
        body = int(model.jnt_bodyid[jnt])
        anchor = data.xanchor[jnt]
        moved = [b for b in range(model.nbody) if _descends(model, b, body)]
        far = 0.0
        for g in range(model.ngeom):
            if int(model.geom_bodyid[g]) in moved:
                far = max(far, float(np.linalg.norm(data.geom_xpos[g] - anchor)) + float(model.geom_rbound[g]))
        reach[i] = far
    return reach


def _descends(model: mujoco.MjModel, body: int, ancestor: int) -> bool:
    while body > 0:
        if body == ancestor:
            return True
        body = int(model.body_parentid[body])
    return ancestor == 0


def speed_bounds(model: mujoco.MjModel, joint_dof_adr: tuple[int, ...], base_height: float, push_vel: float,
                 margin: float = 1.0) -> SpeedBounds:
    """The bounds of the robot in ``model`` (see the module docstring)."""
    unit = math.sqrt(GRAVITY * base_height)
    fast = CHEETAH_FROUDE * unit
    reach = joint_reach(model, joint_dof_adr)
    hinge = [int(model.jnt_type[model.dof_jntid[d]]) == int(mujoco.mjtJoint.mjJNT_HINGE) for d in joint_dof_adr]
    joints = tuple(margin * SWING_SPEED * (fast / max(r, 1e-3) if h else fast)
                   for r, h in zip(reach, hinge, strict=True))
    return SpeedBounds(base_lin_vel=margin * (BASE_FROUDE * unit + push_vel), base_ang_vel=margin * fast / base_height,
                       joint_vel=joints)
