"""The reaching arm as data: its model file, joints, servos and sites by name, resolved once against the model.

``ARM`` names what the task needs; ``resolve`` compiles ``arm.xml`` and turns every name into addresses and
values (policy order = ``ArmSpec.joints`` order), failing with one line naming a missing name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco

from contract.errors import UserError


@dataclass(frozen=True)
class ArmSpec:
    """What the reaching task needs to know about an arm, by name."""

    name: str
    """The arm's name (exported)."""
    model_path: Path
    """MJCF file of the arm and its scene (floor, light, camera, target site)."""
    joints: tuple[str, ...]
    """Actuated hinge joints in the policy's order (each driven by one position servo)."""
    default_pose: tuple[float, ...]
    """Joint angles (rad) of the default pose, ``joints`` order: the offset of observations and actions."""
    fingertip_site: str
    """The site that must reach the target."""
    shoulder_site: str
    """The site targets are drawn around."""
    base_body: str
    """The fixed body whose frame the target is observed in."""
    target_site: str
    """Visual-only site that shows the target in renderings."""
    camera: str
    """Camera a video films through."""


ARM = ArmSpec(name="reach_arm", model_path=Path(__file__).with_name("arm.xml"),
              joints=("base_yaw", "shoulder_pitch", "elbow_pitch", "wrist_pitch"),
              default_pose=(0.0, 0.6, 1.2, 0.6), fingertip_site="fingertip", shoulder_site="shoulder",
              base_body="base", target_site="target", camera="side")
"""The built-in 4-joint arm."""


@dataclass(frozen=True)
class ResolvedArm:
    """``ArmSpec`` resolved against its compiled model."""

    spec: ArmSpec
    model: mujoco.MjModel
    joint_qpos_adr: tuple[int, ...]
    """qpos address of each joint (policy order)."""
    joint_dof_adr: tuple[int, ...]
    """qvel address of each joint."""
    actuator_of_joint: tuple[int, ...]
    """The position servo of each joint."""
    joint_range: tuple[tuple[float, float], ...]
    """``(low, high)`` of each joint (rad)."""
    kp: tuple[float, ...]
    """Servo stiffness per joint (N m/rad)."""
    kd: tuple[float, ...]
    """Servo damping per joint (N m s/rad)."""
    torque_limit: tuple[float | None, ...]
    """Servo torque limit per joint (N m; None: unlimited)."""
    fingertip_site_id: int
    shoulder: tuple[float, float, float]
    """Shoulder site position (world, m; fixed: it sits on the turret's axis)."""
    base_pos: tuple[float, float, float]
    """The base body's position (world, m): the origin of the observed target position."""
    target_site_id: int

    @property
    def num_joints(self) -> int:
        return len(self.joint_qpos_adr)


def _id(model: mujoco.MjModel, kind: mujoco.mjtObj, name: str, what: str, spec: ArmSpec) -> int:
    i = mujoco.mj_name2id(model, kind, name)
    if i < 0:
        raise UserError(f"arm {spec.name}: {what} '{name}' is not in {spec.model_path.name}")
    return i


def resolve(spec: ArmSpec = ARM) -> ResolvedArm:
    """Compile the arm's model and resolve every name of ``spec``."""
    model = mujoco.MjModel.from_xml_path(str(spec.model_path))
    if len(spec.default_pose) != len(spec.joints):
        raise UserError(f"arm {spec.name}: {len(spec.default_pose)} default angles for {len(spec.joints)} joints")
    joints = [_id(model, mujoco.mjtObj.mjOBJ_JOINT, n, "joint", spec) for n in spec.joints]
    for name, j in zip(spec.joints, joints, strict=True):
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE:
            raise UserError(f"arm {spec.name}: joint '{name}' is not a hinge")
    servo = {int(model.actuator_trnid[a, 0]): a for a in range(model.nu)
             if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT}
    missing = [n for n, j in zip(spec.joints, joints, strict=True) if j not in servo]
    if missing:
        raise UserError(f"arm {spec.name}: joints without a servo: {', '.join(missing)}")
    acts = [servo[j] for j in joints]
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    shoulder = _id(model, mujoco.mjtObj.mjOBJ_SITE, spec.shoulder_site, "site", spec)
    base = _id(model, mujoco.mjtObj.mjOBJ_BODY, spec.base_body, "body", spec)
    _id(model, mujoco.mjtObj.mjOBJ_CAMERA, spec.camera, "camera", spec)
    limited = [bool(model.actuator_forcelimited[a]) for a in acts]
    return ResolvedArm(
        spec=spec, model=model,
        joint_qpos_adr=tuple(int(model.jnt_qposadr[j]) for j in joints),
        joint_dof_adr=tuple(int(model.jnt_dofadr[j]) for j in joints),
        actuator_of_joint=tuple(acts),
        joint_range=tuple((float(model.jnt_range[j, 0]), float(model.jnt_range[j, 1])) for j in joints),
        kp=tuple(float(model.actuator_gainprm[a, 0]) for a in acts),
        kd=tuple(float(-model.actuator_biasprm[a, 2]) for a in acts),
        torque_limit=tuple(float(model.actuator_forcerange[a, 1]) if lim else None
                           for a, lim in zip(acts, limited, strict=True)),
        fingertip_site_id=_id(model, mujoco.mjtObj.mjOBJ_SITE, spec.fingertip_site, "site", spec),
        shoulder=tuple(float(x) for x in data.site_xpos[shoulder]),  # type: ignore[arg-type]
        base_pos=tuple(float(x) for x in data.xpos[base]),  # type: ignore[arg-type]
        target_site_id=_id(model, mujoco.mjtObj.mjOBJ_SITE, spec.target_site, "site", spec))

