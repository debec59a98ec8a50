"""Menagerie-style MJCF robot files written for the tests (no third-party file): an ANYbotics-style quadruped
(LF/RF/LH/RH, unnamed multi-geom feet on the shanks, its own position actuators and a keyframe) and a small
humanoid (seven named capsules under each ankle body, a waist and arms to hold, wrists to weld, no armature), and
``biped_spec``, the humanoid's RobotSpec."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Optional

from envs.robots.spec import ActuatorGroup, HeldJoints, RobotSpec

_LEGS = {"LF": (0.3, 0.1), "RF": (0.3, -0.1), "LH": (-0.3, 0.1), "RH": (-0.3, -0.1)}


def quadruped_xml() -> str:
    """About 28 kg; every shank body carries four unnamed collision geoms (capsule, box, cylinder, foot sphere)."""
    legs, acts = [], []
    for leg, (x, y) in _LEGS.items():
        side = 1 if y > 0 else -1
        legs.append(f'''
      <body name="{leg}_HIP" pos="{x} {y} 0">
        <inertial mass="1.5" pos="0 0 0" diaginertia="0.003 0.003 0.003"/>
        <joint name="{leg}_HAA" class="HAA"/>
        <geom class="visual" type="cylinder" size="0.05 0.04" zaxis="1 0 0"/>
        <body name="{leg}_THIGH" pos="0 {0.08 * side} 0">
          <inertial mass="2" pos="0 0 -0.12" diaginertia="0.02 0.02 0.003"/>
          <joint name="{leg}_HFE" class="HFE"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.035"/>
          <body name="{leg}_SHANK" pos="0 0 -0.25">
            <inertial mass="0.5" pos="0 0 -0.12" diaginertia="0.005 0.005 0.0005"/>
            <joint name="{leg}_KFE" class="KFE"/>
            <geom type="capsule" fromto="0 0 -0.03 0 0 -0.19" size="0.025"/>
            <geom type="box" pos="0 0 -0.12" size="0.02 0.03 0.03"/>
            <geom type="cylinder" pos="0 0 -0.21" size="0.02 0.015" zaxis="0 1 0"/>
            <geom type="sphere" pos="0 0 -0.25" size="0.03" priority="1" condim="3"/>
          </body>
        </body>
      </body>''')
        acts += [f'<position name="{leg}_{j}_act" class="anyq" joint="{leg}_{j}"/>' for j in ("HAA", "HFE", "KFE")]
    home = "0 0 0.46 1 0 0 0 " + " ".join(["0 0.6 -1.2"] * 4)
    return f'''<mujoco model="anyq">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="0.005" cone="elliptic" impratio="100"/>
  <default>
    <default class="anyq">
      <joint damping="0.5" armature="0.02"/>
      <position kp="200" kv="5" forcerange="-120 120"/>
      <geom contype="1" conaffinity="1" friction="0.8 0.02 0.01"/>
      <default class="HAA"><joint axis="1 0 0" range="-0.7 0.7"/></default>
      <default class="HFE"><joint axis="0 1 0" range="-1.5 1.5"/></default>
      <default class="KFE"><joint axis="0 1 0" range="-2.6 -0.3"/></default>
      <default class="visual"><geom contype="0" conaffinity="0" group="2"/></default>
    </default>
  </default>
  <worldbody>
    <body name="base" pos="0 0 0.5" childclass="anyq">
      <freejoint/>
      <inertial mass="20" pos="0 0 0" diaginertia="0.3 0.8 0.9"/>
      <geom type="box" size="0.3 0.12 0.08"/>
      <light name="spot" pos="0 0 2" mode="trackcom"/>{"".join(legs)}
    </body>
  </worldbody>
  <actuator>
    {chr(10).join("    " + a for a in acts).strip()}
  </actuator>
  <keyframe>
    <key name="home" qpos="{home}" ctrl="{" ".join(["0 0.6 -1.2"] * 4)}"/>
  </keyframe>
</mujoco>
'''


def humanoid_xml(file_actuators: bool = False, hand_inertia: float = 1e-6) -> str:
    """A 14-joint humanoid: per leg hip pitch / roll, knee, ankle pitch (the ankle body carries seven named
    capsules), a waist, per arm shoulder pitch, elbow and a wrist whose hand is very light (``hand_inertia``);
    no armature anywhere. ``file_actuators``: its own position actuators on every joint, and a keyframe."""
    def leg(side: str, y: float) -> str:
        capsules = "\n".join(
            f'              <geom name="{side}_foot_{k}" type="capsule" size="0.012" '
            f'fromto="{-0.05 + 0.025 * (k % 4):.3f} {-0.03 + 0.02 * (k // 4) + 0.01 * (k % 2):.3f} -0.05 '
            f'{0.08 + 0.02 * (k % 3):.3f} {-0.03 + 0.02 * (k // 4) + 0.01 * (k % 2):.3f} -0.05"/>' for k in range(7))
        return f'''
      <body name="{side}_hip" pos="0 {y} -0.05">
        <inertial mass="1.5" pos="0 0 0" diaginertia="0.003 0.003 0.003"/>
        <joint name="{side}_hip_pitch_joint" axis="0 1 0" range="-1.6 1.6"/>
        <joint name="{side}_hip_roll_joint" axis="1 0 0" range="-0.4 0.4"/>
        <body name="{side}_thigh" pos="0 0 -0.05">
          <inertial mass="3" pos="0 0 -0.18" diaginertia="0.03 0.03 0.005"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.35" size="0.04"/>
          <body name="{side}_shin" pos="0 0 -0.38">
            <inertial mass="2" pos="0 0 -0.18" diaginertia="0.02 0.02 0.003"/>
            <joint name="{side}_knee_joint" axis="0 1 0" range="-0.1 2.2"/>
            <geom type="capsule" fromto="0 0 0 0 0 -0.35" size="0.035"/>
            <body name="{side}_ankle_link" pos="0 0 -0.38">
              <inertial mass="0.6" pos="0.02 0 -0.04" diaginertia="0.002 0.002 0.001"/>
              <joint name="{side}_ankle_pitch_joint" axis="0 1 0" range="-0.8 0.5"/>
{capsules}
            </body>
          </body>
        </body>
      </body>'''

    def arm(side: str, y: float) -> str:
        return f'''
        <body name="{side}_upper_arm" pos="0 {y} 0.3">
          <inertial mass="1.2" pos="0 0 -0.12" diaginertia="0.008 0.008 0.001"/>
          <joint name="{side}_shoulder_pitch_joint" axis="0 1 0" range="-2.0 2.0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.03"/>
          <body name="{side}_forearm" pos="0 0 -0.27">
            <inertial mass="0.8" pos="0 0 -0.1" diaginertia="0.004 0.004 0.0005"/>
            <joint name="{side}_elbow_joint" axis="0 1 0" range="-0.2 2.0"/>
            <geom type="capsule" fromto="0 0 0 0 0 -0.22" size="0.025"/>
            <body name="{side}_hand" pos="0 0 -0.24">
              <inertial mass="0.01" pos="0 0 -0.01" diaginertia="{hand_inertia} {hand_inertia} {hand_inertia}"/>
              <joint name="{side}_wrist_joint" axis="0 1 0" pos="0.02 0 0.01" limited="false"/>
              <geom type="sphere" size="0.02" contype="0" conaffinity="0"/>
            </body>
          </body>
        </body>'''

    joints = [f"{s}_{j}_joint" for s in ("left", "right") for j in ("hip_pitch", "hip_roll", "knee", "ankle_pitch")]
    joints += ["waist_yaw_joint"] + [f"{s}_{j}_joint" for s in ("left", "right")
                                      for j in ("shoulder_pitch", "elbow", "wrist")]
    extra = ""
    if file_actuators:
        acts = "\n".join(f'    <position name="{j}" joint="{j}" kp="150" kv="4" forcerange="-150 150"/>'
                         for j in joints)
        extra = f'''  <actuator>
{acts}
  </actuator>
  <keyframe>
    <key name="home" qpos="0 0 0.95 1 0 0 0 {' '.join(['0'] * len(joints))}"/>
  </keyframe>
'''
    return f'''<mujoco model="biped">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="0.005"/>
  <default><geom contype="1" conaffinity="1" friction="1 0.02 0.01"/></default>
  <worldbody>
    <body name="pelvis" pos="0 0 0.95">
      <freejoint name="floating_base"/>
      <inertial mass="8" pos="0 0 0" diaginertia="0.08 0.06 0.06"/>
      <geom type="box" size="0.08 0.12 0.06"/>
      <body name="torso" pos="0 0 0.08">
        <inertial mass="12" pos="0 0 0.2" diaginertia="0.3 0.25 0.1"/>
        <joint name="waist_yaw_joint" axis="0 0 1" range="-1 1"/>
        <geom type="box" pos="0 0 0.2" size="0.08 0.14 0.15"/>{arm("left", 0.2)}{arm("right", -0.2)}
      </body>{leg("left", 0.1)}{leg("right", -0.1)}
    </body>
  </worldbody>
{extra}</mujoco>
'''


BIPED_LEGS = tuple(f"{s}_{j}_joint" for s in ("left", "right")
                   for j in ("hip_pitch", "hip_roll", "knee", "ankle_pitch"))
"""The trained joints of ``biped_spec``."""
BIPED_ARMS = r"waist_yaw_joint|.*_(shoulder_pitch|elbow)_joint"
"""The joints ``biped_spec`` holds besides the wrists."""


def biped_spec(directory: Path, xml: Optional[str] = None, **fields: Any) -> RobotSpec:
    """A RobotSpec of ``humanoid_xml()`` (or ``xml``), written into ``directory``: the legs trained with armature
    from the groups, the waist, shoulders and elbows held, the wrists held at 0; ``fields`` replace any field."""
    spec = RobotSpec(
        name="biped", mjcf=write(directory, "biped.xml", xml or humanoid_xml()), base_body="pelvis",
        joints=BIPED_LEGS,
        default_pose={".*_hip_pitch_joint": -0.2, ".*_hip_roll_joint": 0.0, ".*_knee_joint": 0.4,
                      ".*_ankle_pitch_joint": -0.2},
        actuators=(ActuatorGroup(".*_(hip_.*|knee)_joint", kp=150.0, kd=4.0, effort_limit=150.0, armature=0.02),
                   ActuatorGroup(".*_ankle_pitch_joint", kp=80.0, kd=2.0, effort_limit=50.0, armature=0.01),
                   ActuatorGroup(BIPED_ARMS, kp=100.0, kd=2.0, effort_limit=60.0, armature=0.01),
                   ActuatorGroup(".*_wrist_joint", kp=5.0, kd=0.1, effort_limit=5.0, armature=0.001)),
        action_scale=0.25, base_height=0.93, foot_bodies=("left_ankle_link", "right_ankle_link"),
        termination_contacts=("pelvis", "torso"), penalized_contacts=(".*_thigh", ".*_shin"),
        held=(HeldJoints(BIPED_ARMS, pose={"waist_yaw_joint": 0.0, ".*_shoulder_pitch_joint": 0.2,
                                           ".*_elbow_joint": 0.5}),
              HeldJoints(".*_wrist_joint", pose=0.0)))
    return dataclasses.replace(spec, **fields)


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


G1_LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
G1_WAIST = ("waist_yaw", "waist_roll", "waist_pitch")
G1_ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
G1_JOINTS = tuple(f"{s}_{j}_joint" for s in ("left", "right") for j in G1_LEG) + tuple(
    f"{j}_joint" for j in G1_WAIST) + tuple(f"{s}_{j}_joint" for s in ("left", "right") for j in G1_ARM)
"""The 29 joints of a G1-style humanoid in the file order of Unitree's release (Menagerie-style names)."""

_AXES = {"pitch": "0 1 0", "roll": "1 0 0", "yaw": "0 0 1", "knee": "0 1 0", "elbow": "0 1 0"}


def _chain(prefix: str, joints: tuple[str, ...], offsets: list[str], indent: int, leaf: str) -> str:
    """Nested bodies, one hinge each (axis from the joint's last word), the last one carrying ``leaf``."""
    if not joints:
        return leaf
    name = f"{prefix}{joints[0]}"
    axis = _AXES[joints[0].rsplit("_", 1)[-1]]
    pad = " " * indent
    inner = _chain(prefix, joints[1:], offsets[1:], indent + 2, leaf)
    return (f'{pad}<body name="{name}_link" pos="{offsets[0]}">\n'
            f'{pad}  <inertial mass="1" pos="0 0 -0.05" diaginertia="0.01 0.01 0.01"/>\n'
            f'{pad}  <joint name="{name}_joint" axis="{axis}" range="-2.5 2.5"/>\n'
            f'{pad}  <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.03"/>\n{inner}\n{pad}</body>')


def g1_like_xml() -> str:
    """A G1-style humanoid written here (29 hinge joints in Unitree's order, Menagerie-style names; crude masses)."""
    leg_off = ["0 {y} -0.05", "0 0 -0.05", "0 0 -0.05", "0 0 -0.3", "0 0 -0.3", "0 0 -0.03"]
    arm_off = ["0 {y} 0.25", "0 0 0", "0 0 -0.1", "0 0 -0.15", "0 0 -0.1", "0 0 -0.03", "0 0 -0.03"]
    foot = '<geom type="box" pos="0.03 0 -0.03" size="0.09 0.04 0.015"/>'
    legs = "\n".join(_chain(f"{s}_", G1_LEG, [o.format(y=y) for o in leg_off], 6, " " * 18 + foot)
                     for s, y in (("left", 0.1), ("right", -0.1)))
    arms = "\n".join(_chain(f"{s}_", G1_ARM, [o.format(y=y) for o in arm_off], 12, "")
                     for s, y in (("left", 0.18), ("right", -0.18)))
    torso = _chain("", G1_WAIST, ["0 0 0.05", "0 0 0", "0 0 0"], 6,
                   f'          <body name="torso_link">\n            <inertial mass="8" pos="0 0 0.2" '
                   f'diaginertia="0.2 0.2 0.1"/>\n            <geom type="box" pos="0 0 0.2" size="0.08 0.12 0.15"/>\n'
                   f'{arms}\n          </body>')
    return f'''<mujoco model="g1_like">
  <compiler angle="radian" autolimits="true"/>
  <worldbody>
    <body name="pelvis" pos="0 0 0.8">
      <freejoint name="floating_base_joint"/>
      <inertial mass="4" pos="0 0 0" diaginertia="0.05 0.05 0.05"/>
      <geom type="box" size="0.06 0.1 0.05"/>
{legs}
{torso}
    </body>
  </worldbody>
</mujoco>
'''
