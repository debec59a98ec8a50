"""Robot profiles: which message family a Unitree robot speaks and which joint each motor slot drives.

A slot is named after the joint of MuJoCo Menagerie's model of the robot (``unitree_go2``, ``unitree_g1``), the
names our robot files and exported policies use, so the runtime matches the policy's ``joint_names`` (and
``held_joint_names``) to slots by name, never by position. Slots without a joint, and joints the policy neither
trains nor holds, are sent zero gains (idle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from contract.errors import UserError


@dataclass(frozen=True)
class Profile:
    """One robot model as its low-level interface sees it."""

    name: str
    """Profile name (the Menagerie model's)."""
    family: str
    """``unitree_go`` or ``unitree_hg``: the message types of ``rt/lowcmd`` / ``rt/lowstate``."""
    slots: tuple[Optional[str], ...]
    """Joint name per motor slot of the message (None: no motor there), slot order."""
    servo_mode: int
    """``MotorCmd_.mode`` of a driven motor (1: servo / enabled); idle slots get 0."""
    robots: str
    """The robots it fits, in words."""

    @property
    def joints(self) -> tuple[str, ...]:
        """The joints of the used slots, slot order (the adapter's ``joint_names``)."""
        return tuple(n for n in self.slots if n is not None)

    @property
    def slot_of(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.slots) if n is not None}


def _go2() -> Profile:
    legs = [f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")]
    return Profile("unitree_go2", "unitree_go", tuple(legs) + (None,) * 8, 1,
                   "Go2 (and Go1: the same slots and joint names)")


def _g1() -> Profile:
    leg = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
    arm = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
    names = ([f"left_{j}_joint" for j in leg] + [f"right_{j}_joint" for j in leg]
             + ["waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"]
             + [f"left_{j}_joint" for j in arm] + [f"right_{j}_joint" for j in arm])
    return Profile("unitree_g1", "unitree_hg", tuple(names) + (None,) * 6, 1,
                   "G1 with 29 joints (ankles in pitch-roll mode)")


PROFILES: dict[str, Profile] = {p.name: p for p in (_go2(), _g1())}
"""Every profile by name."""


def get(name: str) -> Profile:
    """The profile called ``name``; one UserError line naming the known ones otherwise."""
    if name not in PROFILES:
        raise UserError(f"--robot={name!r} is not a known Unitree profile; known: {', '.join(PROFILES)}")
    return PROFILES[name]


def driven_joints(meta: dict[str, Any]) -> list[str]:
    """The joints a policy commands: its trained joints, then the held ones."""
    return list(meta["joint_names"]) + list(meta.get("held_joint_names", []))


def for_policy(meta: dict[str, Any], name: Optional[str] = None) -> Profile:
    """``name``'s profile, or the one whose slots name every joint the policy drives; a UserError line naming
    the joints a profile lacks otherwise."""
    joints = driven_joints(meta)
    candidates = [get(name)] if name else list(PROFILES.values())
    for p in candidates:
        if set(joints) <= set(p.joints):
            return p
    lacking = {p.name: [j for j in joints if j not in p.joints] for p in candidates}
    detail = "; ".join(f"{n} lacks {', '.join(j[:4])}{' ...' if len(j) > 4 else ''}" for n, j in lacking.items())
    raise UserError(f"unitree: no robot profile drives every joint of policy task {meta.get('task')!r} ({detail}); "
                    f"the policy's joint_names must be the Menagerie model's joint names")
