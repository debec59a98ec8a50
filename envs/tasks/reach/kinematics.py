"""Forward kinematics of a site on a chain of hinge joints, in torch, batched over envs.

The task needs the fingertip's position right after a reset too, when a backend's derived quantities (site
positions, sensors) are still those of the previous episode; so it computes it from ``qpos`` with the model's
own body offsets, orientations and joint axes (read once from the compiled model). Any serial chain of bodies
with at most one hinge each works; ``tests/envs/tasks/test_reach.py`` checks it against ``mj_forward``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import torch

from envs.motion.kinematics import axis_angle, cross_matrix


@dataclass(frozen=True)
class Link:
    """One body of the chain: its offset and rotation in its parent, and its hinge (if any)."""

    pos: torch.Tensor
    """Body position in the parent frame ``[3]``."""
    rot: torch.Tensor
    """Body orientation in the parent frame ``[3, 3]``."""
    qpos_adr: int
    """qpos address of the body's hinge (-1: none)."""
    axis: torch.Tensor
    """Cross-product matrix ``[3, 3]`` of the hinge's unit axis in the body frame (zero: no hinge)."""
    anchor: torch.Tensor
    """Hinge position in the body frame ``[3]``."""


class SiteKinematics:
    """World position of one site of ``model`` from ``qpos`` ``[N, nq]`` (float32)."""

    def __init__(self, model: mujoco.MjModel, site_id: int, device: torch.device):
        def t(x: np.ndarray) -> torch.Tensor:
            return torch.tensor(np.asarray(x, dtype=np.float64), dtype=torch.float32, device=device)

        chain = []
        body = int(model.site_bodyid[site_id])
        while body > 0:
            chain.append(body)
            body = int(model.body_parentid[body])
        self.links: list[Link] = []
        for b in reversed(chain):
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, model.body_quat[b])
            n = int(model.body_jntnum[b])
            if n > 1 or (n == 1 and model.jnt_type[model.body_jntadr[b]] != mujoco.mjtJoint.mjJNT_HINGE):
                raise ValueError(f"body {model.body(b).name}: site kinematics handles one hinge per body")
            j = int(model.body_jntadr[b])
            axis, anchor = (model.jnt_axis[j], model.jnt_pos[j]) if n else (np.zeros(3), np.zeros(3))
            self.links.append(Link(t(model.body_pos[b]), t(rot.reshape(3, 3)), int(model.jnt_qposadr[j]) if n else -1,
                                   t(cross_matrix(axis)), t(anchor)))
        self.site_pos = t(model.site_pos[site_id])

    def __call__(self, qpos: torch.Tensor) -> torch.Tensor:
        n = qpos.shape[0]
        rot = torch.eye(3, device=qpos.device).expand(n, 3, 3)
        pos = torch.zeros(n, 3, device=qpos.device)
        for link in self.links:
            pos = pos + rot @ link.pos
            rot = rot @ link.rot
            if link.qpos_adr >= 0:
                turn = axis_angle(link.axis, qpos[:, link.qpos_adr])
                pos = pos + rot @ link.anchor - (rot @ turn) @ link.anchor
                rot = rot @ turn
        return pos + rot @ self.site_pos
