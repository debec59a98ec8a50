"""Left-right symmetry of a robot as signed permutations of its joint values and observations.

Which name is whose twin, and which joint angles change sign, comes from ``envs/robots/sides.py`` (the common
naming conventions: ``left_`` / ``right_``, ``l_`` / ``r_``, ``L_`` / ``R_``, ``FL`` / ``FR`` / ``RL`` / ``RR``,
``LF`` / ``RF`` / ``LH`` / ``RH``; or a ``MirrorMap`` the robot spec declares). Mirroring across the robot's
sagittal (x-z) plane swaps every twin and flips the sign of the angles of joints that turn about x or z.
Vectors mirror as (x, -y, z), pseudo-vectors (angular velocities) as (-x, y, -z); velocity commands (vx, vy,
yaw rate) as (vx, -vy, -yaw rate). Used for symmetry checks and augmentation; nothing here is robot-specific.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

from envs.robots.sides import (
    LEG_FRONT_FIRST,
    LEG_SIDE_FIRST,
    MirrorMap,
    flipped,
    has_twins,
    missing_twins,
    sides,
    twin,
    twins,
)

__all__ = ["GroupMirror", "Mirror", "MirrorMap", "TensorMirror", "foot_pairs", "has_twins", "joint_mirror",
           "observation_mirror", "side_pairs", "twin", "with_unchanged"]


class TensorMirror:
    """A ``Mirror`` with its index and signs as tensors made once (no host-to-device copy per call)."""

    def __init__(self, mirror: Mirror, device: torch.device):
        self.perm = torch.tensor(mirror.perm, dtype=torch.long, device=device)
        self.sign = torch.tensor(mirror.sign, dtype=torch.float32, device=device)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, -1, self.perm.to(x.device)) * self.sign.to(x.device, x.dtype)


class GroupMirror:
    """The mirrors of an env's observation groups (``rl_core.env_api.Symmetric.mirror_obs``): ``m(obs, group)``."""

    def __init__(self, groups: Mapping[str, Mirror], device: torch.device):
        self.groups = {group: TensorMirror(mirror, device) for group, mirror in groups.items()}
        """Group name (``"policy"``, ``"critic"``) -> its mirror."""

    def __call__(self, x: torch.Tensor, group: str = "policy") -> torch.Tensor:
        if group not in self.groups:
            raise ValueError(f"mirror_obs: no observation group {group!r}; allowed: {', '.join(self.groups)}")
        return self.groups[group](x)


@dataclass(frozen=True)
class Mirror:
    """A signed permutation: ``mirrored[:, i] = sign[i] * x[:, perm[i]]``."""

    perm: tuple[int, ...]
    """Source column of each output column."""
    sign: tuple[float, ...]
    """Sign of each output column."""

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """The mirror of ``x [..., columns]`` (tensors made per call: hot paths keep a ``TensorMirror``)."""
        return TensorMirror(self, x.device)(x)


def joint_mirror(names: Sequence[str], mirror: MirrorMap | None = None) -> Mirror:
    """The mirror of per-joint values in the order of ``names``; every sided joint needs its twin."""
    missing = missing_twins(names, mirror)
    if missing:
        raise ValueError(f"no mirror twin for joints {', '.join(missing)}")
    index = {n: i for i, n in enumerate(names)}
    return Mirror(tuple(index[t] for t in twins(names, mirror)),
                  tuple(-1.0 if flipped(n, mirror) else 1.0 for n in names))


def with_unchanged(mirror: Mirror, n: int) -> Mirror:
    """``mirror`` followed by ``n`` columns the mirror leaves as they are (scalars of the world, e.g. friction)."""
    start = len(mirror.perm)
    return Mirror(mirror.perm + tuple(range(start, start + n)), mirror.sign + (1.0,) * n)


def side_pairs(names: Sequence[str], mirror: MirrorMap | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Columns of the left-side names (``left_*``, a quadruped's ``FL_*`` / ``RL_*`` / ``LF_*`` / ``LH_*``) and of
    their right twins; empty when the names have no sides."""
    index = {n: i for i, n in enumerate(names)}
    named = zip(names, twins(names, mirror), sides(names, mirror), strict=True)
    pairs = [(i, index[t]) for i, (n, t, s) in enumerate(named) if s == "left" and t in index]
    return tuple(i for i, _ in pairs), tuple(j for _, j in pairs)


def foot_pairs(names: Sequence[str], mirror: MirrorMap | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Columns of a biped's left feet and of their right twins (empty for legs named front / rear: a quadruped's
    ``FL`` / ``LF`` feet, and when the names have no sides)."""
    if mirror is None and any(LEG_FRONT_FIRST.search(n) or LEG_SIDE_FIRST.search(n) for n in names):
        return (), ()
    return side_pairs(names, mirror)


RULE_SIGNS = {
    "vector": (1.0, -1.0, 1.0),
    "axial": (-1.0, 1.0, -1.0),
    "command": (1.0, -1.0, -1.0),
}
"""Signs of the three components of a term under each fixed-size mirror rule (``envs/tasks/observations.py``)."""


def observation_mirror(layout: Sequence[tuple[str, int]], rules: Mapping[str, str], joint_names: Sequence[str],
                       mirror: MirrorMap | None = None) -> Mirror:
    """The mirror of an observation with the given ``(term, size)`` layout, each term by its rule (``rules``:
    term -> ``vector`` / ``axial`` / ``command`` / ``joints``; from the task's observation table).

    joint_pos is observed relative to the default pose, so this is exact when the default pose is symmetric
    (``joint_mirror(names)(default) == default``)."""
    joints = joint_mirror(joint_names, mirror)
    perm: list[int] = []
    sign: list[float] = []
    start = 0
    for term, size in layout:
        rule = rules[term]
        if rule in RULE_SIGNS and size == 3:
            perm += range(start, start + size)
            sign += RULE_SIGNS[rule]
        elif rule == "joints" and size == len(joint_names):
            perm += [start + p for p in joints.perm]
            sign += joints.sign
        else:
            raise ValueError(f"no mirror rule for observation term {term!r} ({rule}, {size} values)")
        start += size
    return Mirror(tuple(perm), tuple(sign))
