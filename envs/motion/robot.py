"""The robot a clip drives: its file's every joint trained (held joints become trained ones, at their held pose as
their default; welded joints stay welded), put into the scene by ``envs/scenes/assemble.py``."""

from __future__ import annotations

import dataclasses

from envs.robots.resolved import ResolvedRobot
from envs.robots.spec import RobotSpec
from envs.scenes.assemble import build


def every_joint_trained(spec: RobotSpec) -> RobotSpec:
    """``spec`` with its held joints moved into ``joints`` (after the trained ones), their held pose their default."""
    if not spec.held:
        return spec
    pose = list(spec.default_pose)
    for held in spec.held:
        pose += [(held.joints, held.pose)] if isinstance(held.pose, float) else list(held.pose)
    return dataclasses.replace(spec, joints=spec.joints + tuple(h.joints for h in spec.held),
                               default_pose=tuple(pose), held=())


def build_tracking(spec: RobotSpec, collisions: str = "full", solver_iterations: int | None = None,
                   ls_iterations: int | None = None) -> ResolvedRobot:
    """The scene with ``spec``'s robot, every joint trained (``every_joint_trained``)."""
    return build(every_joint_trained(spec), collisions, solver_iterations, ls_iterations)
