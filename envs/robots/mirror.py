"""Left-right symmetry of a robot, derived from its names: ``left_*`` <-> ``right_*``, and the quadruped legs
``FL_*`` <-> ``FR_*``, ``RL_*`` <-> ``RR_*``.

Mirroring across the robot's sagittal (x-z) plane swaps every ``left`` name with its ``right`` twin and flips
the sign of the angles of joints that turn about x or z (``roll`` and ``yaw`` in the name, and a quadruped's bare
``*_hip_joint``, its abduction about x), keeping those about y (pitch, knee, a quadruped's thigh and calf).
This assumes the convention of ``envs/robots/humanoid.xml`` and ``quadruped.xml``: twin joints have the same axes.
Vectors mirror as (x, -y, z), pseudo-vectors (angular velocities) as (-x, y, -z); velocity commands (vx, vy,
yaw rate) as (vx, -vy, -yaw rate). Used for symmetry checks and augmentation; nothing here is robot-specific.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

SIDE = re.compile(r"left|right")
LEG = re.compile(r"^([FR])([LR])_")
"""Quadruped leg prefixes (front / rear, left / right), as in legged_gym and Unitree's files."""
FLIPPED = re.compile(r"roll|yaw|abduction|(^|_)hip_joint$")
"""Joints whose name contains one of these change sign under the mirror."""


def twin(name: str) -> str:
    """``left_knee_joint`` -> ``right_knee_joint``, ``FL_calf_joint`` -> ``FR_calf_joint`` (and back); a name
    without a side is its own twin."""
    name = LEG.sub(lambda m: m.group(1) + ("R" if m.group(2) == "L" else "L") + "_", name)
    return SIDE.sub(lambda m: "right" if m.group(0) == "left" else "left", name)


def has_twins(names: Sequence[str]) -> bool:
    """Whether the names pair up: at least one has a side, and every sided one has its twin."""
    return any(twin(n) != n for n in names) and all(twin(n) in names for n in names)


class TensorMirror:
    """A ``Mirror`` with its index and signs as tensors made once (no host-to-device copy per call)."""

    def __init__(self, mirror: Mirror, device: torch.device):
        self.perm = torch.tensor(mirror.perm, dtype=torch.long, device=device)
        self.sign = torch.tensor(mirror.sign, dtype=torch.float32, device=device)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, -1, self.perm.to(x.device)) * self.sign.to(x.device, x.dtype)


@dataclass(frozen=True)
class Mirror:
    """A signed permutation: ``mirrored[:, i] = sign[i] * x[:, perm[i]]``."""

    perm: tuple[int, ...]
    """Source column of each output column."""
    sign: tuple[float, ...]
    """Sign of each output column."""

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        perm = torch.tensor(self.perm, dtype=torch.long, device=x.device)
        sign = torch.tensor(self.sign, dtype=x.dtype, device=x.device)
        return x[..., perm] * sign


def joint_mirror(names: Sequence[str]) -> Mirror:
    """The mirror of per-joint values in the order of ``names``; every sided joint needs its twin."""
    index = {n: i for i, n in enumerate(names)}
    missing = [n for n in names if twin(n) not in index]
    if missing:
        raise ValueError(f"no mirror twin for joints {', '.join(missing)}")
    return Mirror(tuple(index[twin(n)] for n in names), tuple(-1.0 if FLIPPED.search(n) else 1.0 for n in names))


def side(name: str) -> str | None:
    """``left``, ``right`` (from ``left`` / ``right`` in the name or a quadruped's leg prefix), or None."""
    if (leg := LEG.match(name)) is not None:
        return "left" if leg.group(2) == "L" else "right"
    found = SIDE.search(name)
    return found.group(0) if found is not None else None


def side_pairs(names: Sequence[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Columns of the left-side names (``left_*``, a quadruped's ``FL_*`` / ``RL_*``) and of their right twins;
    empty when the names have no sides."""
    pairs = [(i, names.index(twin(n))) for i, n in enumerate(names) if side(n) == "left" and twin(n) in names]
    return tuple(i for i, _ in pairs), tuple(j for _, j in pairs)


def foot_pairs(names: Sequence[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Columns of the left feet and of their right twins (empty when the names have no sides)."""
    left = [i for i, n in enumerate(names) if n.startswith("left") or "_left" in n]
    right = [names.index(twin(names[i])) for i in left if twin(names[i]) in names]
    return tuple(left[:len(right)]), tuple(right)


_TERM_SIGNS = {
    "base_lin_vel": (1.0, -1.0, 1.0),
    "base_ang_vel": (-1.0, 1.0, -1.0),
    "projected_gravity": (1.0, -1.0, 1.0),
    "commands": (1.0, -1.0, -1.0),
}
JOINT_TERMS = ("joint_pos", "joint_vel", "last_actions")
"""Observation terms with one value per actuated joint."""


def observation_mirror(layout: Sequence[tuple[str, int]], joint_names: Sequence[str]) -> Mirror:
    """The mirror of a locomotion observation with the given ``(term, size)`` layout (``LocomotionEnv.obs_layout``).

    joint_pos is observed relative to the default pose, so this is exact when the default pose is symmetric
    (``joint_mirror(names)(default) == default``)."""
    joints = joint_mirror(joint_names)
    perm: list[int] = []
    sign: list[float] = []
    start = 0
    for term, size in layout:
        if term in _TERM_SIGNS:
            perm += range(start, start + size)
            sign += _TERM_SIGNS[term]
        elif term in JOINT_TERMS:
            perm += [start + p for p in joints.perm]
            sign += joints.sign
        else:
            raise ValueError(f"no mirror rule for observation term {term!r}")
        start += size
    return Mirror(tuple(perm), tuple(sign))
