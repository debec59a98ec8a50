"""A walking clip of the G1-style test model (``examples/g1_like``) in Unitree's LAFAN1 CSV layout, made here by
inverse kinematics (issue 47's 60-minute tracking run needs a walk, and no third-party clip is copied in).

The plan, per 30 fps frame: the pelvis moves forward at ``speed`` at a constant height, upright, swaying sideways
as a linear inverted pendulum over each stance foot (periodic solution, so the sway is smooth across steps); the
feet alternate, each stance foot fixed on the floor, each swing foot lifted along a half sine and carried forward
with a smooth (cosine) profile, landing half a step ahead of the pelvis, with a short double support; the arms swing
against the legs. Each frame's 12 leg angles come from damped least squares on both feet's position and orientation
(flat, facing forward), started from the previous frame's answer. Waist and wrists stay at 0.

    python -m tests.walk_clip OUT.csv [--seconds 12] [--speed 0.4]

writes the CSV: per row base x y z, base quaternion x y z w, then the 29 joint angles in the file's order (Unitree's
LAFAN1 retargeting layout; ``tests.robot_models.G1_JOINTS``)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

XML = Path(__file__).resolve().parents[1] / "examples" / "g1_like" / "g1_like.xml"
FPS = 30.0
FEET = ("left_ankle_roll_link", "right_ankle_roll_link")


@dataclass(frozen=True)
class Gait:
    """The walk's parameters."""

    speed: float = 0.4
    """Forward speed of the pelvis (m/s)."""
    step_s: float = 0.4
    """Duration of one step (s): a stride is two."""
    double_support: float = 0.2
    """Share of each step with both feet on the floor."""
    lift: float = 0.07
    """Height the swing foot is lifted at mid-swing (m)."""
    pelvis_height: float = 0.74
    """Pelvis height over the floor (m); the straight-legged model stands at 0.787."""
    com_height: float = 0.7
    """The pendulum's height for the sideways sway (m)."""
    arm_swing: float = 0.25
    """Shoulder pitch amplitude (rad), against the same side's leg."""


def _sole_offset(m: mujoco.MjModel, d: mujoco.MjData) -> float:
    """Height of the foot body's origin over its lowest collision point, at the model's zero pose."""
    mujoco.mj_forward(m, d)
    foot = m.body(FEET[0]).id
    lowest = min(d.geom_xpos[g][2] - m.geom_size[g][0] for g in range(m.ngeom)
                 if m.geom_bodyid[g] == foot and m.geom_contype[g])
    return float(d.xpos[foot][2] - lowest)


def _feet(t: np.ndarray, g: Gait, foot_y: float, z0: float) -> np.ndarray:
    """Target positions (frames x 2 feet x 3) of the foot bodies."""
    step = g.speed * g.step_s
    k = np.floor(t / g.step_s).astype(int)
    tau = t / g.step_s - k  # phase within the step
    out = np.zeros((len(t), 2, 3))
    for side in (0, 1):  # left stands during even steps, swings during odd ones
        swinging = (k % 2) != side
        # where this foot last landed (end of its previous swing step) and where it lands next
        last = np.where(swinging, k - 1, k)  # it was last placed at the end of step last - 1
        landed = g.speed * last * g.step_s + step / 2
        target = g.speed * (last + 2) * g.step_s + step / 2
        ds = g.double_support / 2
        s = np.clip((tau - ds) / (1 - 2 * ds), 0.0, 1.0)
        blend = 0.5 - 0.5 * np.cos(math.pi * s)
        x = np.where(swinging, landed + (target - landed) * blend, landed)
        z = z0 + np.where(swinging, g.lift * np.sin(math.pi * s), 0.0)
        out[:, side] = np.stack([x, np.full_like(t, foot_y if side == 0 else -foot_y), z], axis=1)
    return out


def _sway(t: np.ndarray, g: Gait, foot_y: float) -> np.ndarray:
    """The pelvis's sideways position: a linear inverted pendulum's periodic answer over each stance foot."""
    w = math.sqrt(9.81 / g.com_height)
    k = np.floor(t / g.step_s).astype(int)
    tau = t - k * g.step_s
    p = np.where(k % 2 == 0, 1.0, -1.0) * foot_y * 0.9  # the zero-moment point inside the stance sole
    return p * (1 - np.cosh(w * (tau - g.step_s / 2)) / math.cosh(w * g.step_s / 2))


def _solve(m: mujoco.MjModel, d: mujoco.MjData, targets: np.ndarray, legs: np.ndarray) -> float:
    """Damped least squares on both feet (position and flat, forward orientation) over the leg joints, from
    ``d.qpos``; returns the largest position residual (m)."""
    jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    dofs = m.jnt_dofadr[legs]
    cols = m.jnt_qposadr[legs]
    for _ in range(100):
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        rows, errs = [], []
        for i, name in enumerate(FEET):
            b = m.body(name).id
            mujoco.mj_jacBody(m, d, jp, jr, b)
            quat = d.xquat[b]
            rot = np.zeros(3)
            mujoco.mju_subQuat(rot, np.array([1.0, 0, 0, 0]), quat)
            errs += [targets[i] - d.xpos[b], rot]
            rows += [jp[:, dofs], jr[:, dofs]]
        J, e = np.vstack(rows), np.concatenate(errs)
        if np.abs(e).max() < 1e-5:
            break
        d.qpos[cols] += np.linalg.solve(J.T @ J + 1e-4 * np.eye(len(dofs)), J.T @ e)
        d.qpos[cols] = np.clip(d.qpos[cols], m.jnt_range[legs, 0], m.jnt_range[legs, 1])
    mujoco.mj_kinematics(m, d)
    return float(max(np.abs(targets[i] - d.xpos[m.body(n).id]).max() for i, n in enumerate(FEET)))


def walk_rows(seconds: float = 12.0, gait: Gait = Gait()) -> tuple[np.ndarray, float]:
    """The clip's rows (LAFAN1 layout) and the largest foot position residual of the inverse kinematics (m)."""
    m = mujoco.MjModel.from_xml_path(str(XML))
    d = mujoco.MjData(m)
    z0 = _sole_offset(m, d)
    mujoco.mj_kinematics(m, d)
    foot_y = float(d.xpos[m.body(FEET[0]).id][1])
    t = np.arange(round(seconds * FPS)) / FPS
    feet, sway = _feet(t, gait, foot_y, z0), _sway(t, gait, foot_y)
    hinges = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    legs = np.array([j for j in hinges if "hip" in m.joint(j).name or "knee" in m.joint(j).name
                     or "ankle" in m.joint(j).name])
    names = [m.joint(j).name for j in hinges]
    q = {n: 0.0 for n in names}
    d.qpos[m.jnt_qposadr[m.joint("left_knee_joint").id]] = d.qpos[m.jnt_qposadr[m.joint("right_knee_joint").id]] = 0.4
    rows, worst = [], 0.0
    for i, ti in enumerate(t):
        d.qpos[:7] = [gait.speed * ti, sway[i], gait.pelvis_height, 1, 0, 0, 0]
        worst = max(worst, _solve(m, d, feet[i], legs))
        swing = gait.arm_swing * math.sin(math.pi * ti / gait.step_s)
        for n in names:
            q[n] = float(d.qpos[m.jnt_qposadr[m.joint(n).id]])
        for side, sign in (("left", 1.0), ("right", -1.0)):
            q[f"{side}_shoulder_pitch_joint"] = -sign * swing
            q[f"{side}_shoulder_roll_joint"] = 0.2 * sign
            q[f"{side}_elbow_joint"] = 0.6
        rows.append([gait.speed * ti, sway[i], gait.pelvis_height, 0.0, 0.0, 0.0, 1.0] + [q[n] for n in names])
    return np.asarray(rows), worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.walk_clip", description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="the CSV to write")
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--speed", type=float, default=Gait.speed)
    args = p.parse_args(argv)
    rows, worst = walk_rows(args.seconds, Gait(speed=args.speed))
    np.savetxt(args.out, rows, delimiter=",", fmt="%.9f")
    print(f"wrote {args.out}: {len(rows)} frames at {FPS:g} fps, {args.speed} m/s; feet within {worst * 1000:.2f} mm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
