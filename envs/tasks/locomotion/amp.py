"""The velocity-tracking task's AMP observation and its reference transitions (``rl_core.env_api.MotionPrior``,
``algorithm.name=amp``).

The AMP observation of a state is a function of its ``qpos`` / ``qvel`` alone, so the robot's steps and the clips'
frames are judged by the same code: joint angles (minus the default pose) and speeds of the trained joints, the
base's height, its linear and angular velocity in the heading frame (yaw only), gravity in the base frame, and each
foot's position relative to the base in the heading frame (torch forward kinematics, ``envs/motion/
kinematics.py``). Reference transitions are the consecutive control steps of ``env.amp_clips``, each clip read and
matched by joint name (``envs/motion/formats.py``), resampled to the control rate and replayed in the robot's scene.

Clips as users have them (issue 47): a .csv / mjlab .npz holds one column per joint of the robot file, welded ones
included (a G1 LAFAN1 CSV: 29 on a draft that welds the 6 wrists); the welded joints' columns are left out (one
line when the clip moves them: the robot cannot). Each clip passes ``envs/motion/plausible.py``'s checks (a w x y z
/ x y z w mix-up, a wrong frame rate, joints out of range) unless ``env.amp_check_clips=false``.
"""

from __future__ import annotations

import torch

from contract.errors import UserError
from contract.motion import Clip
from envs.motion import formats, plausible
from envs.motion.kinematics import TreeKinematics, quat_to_matrix, yaw_rotation
from envs.motion.replay import model_joints, replay
from envs.motion.resample import resample
from envs.motion.robot import drop_welded, file_joints, moved_welded, welded_names
from envs.robots.resolved import ResolvedRobot

CHECKS_OFF = "env.amp_check_clips=false uses it anyway"
"""How the plausibility lines of an AMP clip say to use it anyway."""
def without_welded(clip: Clip, welded: dict[str, float], robot: str, where: str) -> Clip:
    """``clip`` without the columns of ``robot``'s ``welded`` joints (name -> welded angle); one printed line when
    the clip moves some of them (the robot cannot follow them; the AMP observation does not see them)."""
    moved = moved_welded(clip, welded)
    if moved:
        print(f"{where}: the clip moves {len(moved)} joint(s) that robot {robot}'s spec welds ({', '.join(moved)}): "
              "left out of the AMP reference (the robot cannot move them; release them: remove them from the spec's "
              "welded=...)")
    return drop_welded(clip, welded)


class AmpObservation:
    """The AMP observation ``[n, dim]`` of states ``qpos [n, nq]``, ``qvel [n, nv]`` of ``robot``."""

    def __init__(self, rb: ResolvedRobot, default_joint_pos: torch.Tensor, device: torch.device):
        m = rb.model
        geoms = [ids[0] for ids in rb.foot_geom_ids]
        bodies = tuple(int(m.geom_bodyid[g]) for g in geoms)
        self.fk = TreeKinematics(m, bodies, device)
        self.offsets = torch.tensor(m.geom_pos[geoms], dtype=torch.float32, device=device)
        """``[F, 3]`` each foot's geom centre in its body's frame."""
        self.base_q, self.base_v = rb.base_qpos_adr, rb.base_dof_adr
        self.joint_q = torch.tensor(rb.joint_qpos_adr, device=device)
        self.joint_v = torch.tensor(rb.joint_dof_adr, device=device)
        self.default = default_joint_pos
        self.dim = 2 * rb.num_joints + 10 + 3 * len(bodies)
        """Width: joints 2 J, base height 1, velocities 6, gravity 3, feet 3 F."""

    def __call__(self, qpos: torch.Tensor, qvel: torch.Tensor) -> torch.Tensor:
        b, v = self.base_q, self.base_v
        rot = quat_to_matrix(qpos[:, b + 3:b + 7])
        heading_t = yaw_rotation(rot).transpose(1, 2)
        lin = (heading_t @ qvel[:, v:v + 3].unsqueeze(-1)).squeeze(-1)
        ang = (heading_t @ rot @ qvel[:, v + 3:v + 6].unsqueeze(-1)).squeeze(-1)
        feet = self.fk(qpos, qvel)
        points = feet.pos + (feet.rot @ self.offsets.unsqueeze(-1)).squeeze(-1)  # [n, F, 3]
        rel = (points - qpos[:, None, b:b + 3]) @ heading_t.transpose(1, 2)
        return torch.cat([qpos[:, self.joint_q] - self.default, qvel[:, self.joint_v], qpos[:, b + 2:b + 3], lin, ang,
                          -rot[:, 2, :], rel.flatten(1)], dim=1)


class AmpReference:
    """The reference transitions of ``clips`` for ``robot`` at the control rate ``fps``."""

    def __init__(self, clips: tuple[str, ...], rb: ResolvedRobot, fps: float, amp_obs: AmpObservation,
                 device: torch.device, check: bool = True, csv_fps: float = formats.LAFAN1_FPS):
        _, joints = model_joints(rb.model, f"robot {rb.spec.name}")
        model_order = tuple(rb.model.joint(j).name for j in joints)
        file_order = file_joints(rb.spec.mjcf)
        welded = welded_names(rb.spec, file_order)
        firsts, nexts = [], []
        for source in clips:
            where = f"env.amp_clips entry {source}"
            clip = without_welded(formats.load(source, file_order, csv_fps), welded, rb.spec.name, where)
            if check:
                plausible.check(clip, where, plausible.joint_ranges(rb, model_order), plausible.speed_limits(rb),
                                csv_fps, CHECKS_OFF, "env.amp_csv_fps")
            clip = resample(clip, fps)
            ref = replay(rb.model, clip, (), where)
            obs = amp_obs(torch.tensor(ref.qpos, dtype=torch.float32, device=device),
                          torch.tensor(ref.qvel, dtype=torch.float32, device=device))
            firsts.append(obs[:-1])
            nexts.append(obs[1:])
        if not firsts:
            raise UserError("config error: env.amp_clips is empty; AMP needs one or more motion clips")
        self.first, self.next = torch.cat(firsts), torch.cat(nexts)
        """``[P, dim]`` every clip's consecutive states (s, s')."""

    def sample(self, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        i = torch.randint(0, self.first.shape[0], (n,), generator=generator, device=generator.device)
        i = i.to(self.first.device)
        return self.first[i], self.next[i]
