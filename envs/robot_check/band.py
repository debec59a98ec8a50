"""The gains robot makers run, as a band per actuator group: ``check_robot --fix`` searches inside it, and the
check flags a kp above it with the band and the makers' values for that size of motor.

The rule is motor physics (mjlab's, ``envs/robots/draft_gains.armature_rule``): a servo on a motor of reflected
inertia J (the joint's armature) at natural frequency RULE_HZ and damping ratio RULE_DAMPING has kp = J (2 pi f)^2
and kd = 2 zeta J (2 pi f). Without an armature the rule is a stiffness per effort limit (KP_PER_EFFORT_RULE). The
band is BAND x the rule's kp, capped at the larger of EFFORT_CAP x the effort limit and the rule itself; kd at most
KD_PER_KP_MAX x kp. It covers every value of MAKERS (``tests/envs/robot_check/test_check_band.py`` checks each
against the band of its motor).

That band is for joints a policy drives. A held joint carries what is above it and makers hold it stiffer (Unitree's
G1 waist at 150-300, its motor's band 7.13-75): a held group's band reaches up to the holding rule's kp, HOLD x M g
r (``envs/robots/draft_gains.py``: what the draft gives it), where that is above the motor's band (``held``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from envs.robot_check.text import num
from envs.robots.draft_gains import HOLD, armature_rule

KP_PER_EFFORT_RULE = 0.75
"""kp per N m of effort limit where the joint has no armature: the middle of the makers' RL gains (Unitree Go2 20 /
23.7 N m = 0.84, ANYmal C 80 / 80 N m = 1.0, mjlab's G1 0.46 to 0.71)."""
BAND = (0.25, 3.0)
"""The band's kp as a share of the rule's (natural frequency 5 to 17 Hz on the armature)."""
EFFORT_CAP = 1.5
"""The band's top is at most this x the effort limit (a servo saturating after 0.67 rad of error), unless the
rule itself is higher (mjlab's 5 N m wrist motors: kp 16.8)."""
KD_PER_KP_MAX = 0.1
"""kd at most this x kp (makers: 0.025 for Unitree's and ANYbotics' RL gains, 0.064 for mjlab's rule)."""


@dataclass(frozen=True)
class Maker:
    """One published gain set (facts: design notes section 10)."""

    robot: str
    effort: float
    """The motor's effort limit (N m)."""
    kp: float
    kd: float
    source: str
    armature: float = 0.0
    """The motor's reflected inertia (kg m^2) where the source gives it."""


def _mjlab(effort: float, armature: float) -> Maker:
    kp, kd = armature_rule(armature)
    return Maker("Unitree G1", effort, round(kp, 2), round(kd, 3),
                 "mjlab's G1 (kp = J (2 pi 10 Hz)^2, kd = 2 x 2.0 x J x 2 pi 10 Hz)", armature)


MAKERS = (
    Maker("Unitree Go2 / Go1", 23.7, 20.0, 0.5, "unitree_rl_gym / legged_gym RL deploy"),
    Maker("Unitree Go2 / Go1 (calf)", 45.4, 20.0, 0.5, "unitree_rl_gym / legged_gym RL deploy"),
    Maker("ANYmal C", 80.0, 80.0, 2.0, "legged_gym's ANYmal C"),
    _mjlab(5.0, 0.00425), _mjlab(25.0, 0.003609725), _mjlab(50.0, 0.00721945), _mjlab(88.0, 0.01017752),
    _mjlab(139.0, 0.025101925),
    Maker("Unitree G1 (hip pitch / yaw)", 88.0, 100.0, 2.0, "unitree_rl_gym's G1 RL deploy (deploy_real g1.yaml)",
          0.01017752),
    Maker("Unitree G1 (knee)", 139.0, 150.0, 4.0, "unitree_rl_gym's G1 RL deploy", 0.025101925),
    Maker("Unitree G1 (ankles)", 50.0, 40.0, 2.0, "unitree_rl_gym's G1 RL deploy", 0.00721945),
)
"""Makers' published gains per motor (Unitree's stand-only example at kp 50-60 / kd 3-5 left out: not a gait; the
G1 deploy file's hip roll, a 139 N m motor, runs at the hips' 100 / 2)."""


@dataclass(frozen=True)
class Band:
    """The kp band of one actuator group and where it comes from."""

    rule_kp: float
    rule_kd: float
    low: float
    high: float
    kd_high: float
    how: str
    """The rule in words (``mjlab's rule on armature 0.01`` or ``0.75 x effort limit``)."""
    hold: str = ""
    """A held group's top in words (``held: up to 5 x M g r 27.7 N m/rad``), "" where the motor's band stands."""

    def text(self) -> str:
        hold = f"; {self.hold}" if self.hold else ""
        return (f"kp {num(self.low)}-{num(self.high)} ({self.how}: kp {num(self.rule_kp)}, kd {num(self.rule_kd)}"
                f"{hold})")

    def clamp(self, kp: float) -> float:
        return min(max(kp, self.low), self.high)


def band(effort: float, armature: float) -> Band:
    """The band of a motor with this effort limit (N m; inf: unknown) and reflected inertia (kg m^2; 0: none)."""
    if armature > 0:
        rule_kp, rule_kd = armature_rule(armature)
        how = f"mjlab's rule on armature {num(armature)}"
    elif math.isfinite(effort):
        rule_kp = KP_PER_EFFORT_RULE * effort
        rule_kd = rule_kp / 40.0
        how = f"{KP_PER_EFFORT_RULE:g} x effort limit {num(effort)} N m"
    else:
        return Band(math.nan, math.nan, 0.0, math.inf, math.inf, "no armature and no effort limit: no band")
    high = BAND[1] * rule_kp
    if math.isfinite(effort):
        high = min(high, max(EFFORT_CAP * effort, rule_kp))
    return Band(rule_kp, rule_kd, BAND[0] * rule_kp, high, KD_PER_KP_MAX * high, how)


def held(b: Band, carried: float) -> Band:
    """The band of a held group: the motor's band ``b`` with its top raised to the holding rule's kp (HOLD x
    ``carried``, gravity's toppling stiffness M g r in N m / rad) where that is higher; kd's top in proportion."""
    hold = HOLD * carried
    hold = max(hold, float(f"{hold:.3g}"))  # the rule's kp as a spec file shows it (the draft's) lies inside
    if not hold > b.high:
        return b
    return dataclasses.replace(b, high=hold, kd_high=KD_PER_KP_MAX * hold,
                               hold=f"held: up to {HOLD:g} x M g r {num(carried)} N m/rad, the holding rule")


def makers_for(effort: float) -> list[Maker]:
    """The published gains of the motors nearest this effort limit (within a factor 1.6), nearest first."""
    if not math.isfinite(effort) or effort <= 0:
        return []
    near = [m for m in MAKERS if abs(math.log(m.effort / effort)) < math.log(1.6)]
    return sorted(near, key=lambda m: abs(math.log(m.effort / effort)))


def makers_text(effort: float) -> str:
    near = makers_for(effort)
    if not near:
        return "no published gains for a motor of that size"
    return "makers run " + "; ".join(f"{m.robot} ({num(m.effort)} N m) kp {num(m.kp)} / kd {num(m.kd)}, {m.source}"
                                     for m in near[:2])
