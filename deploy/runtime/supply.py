"""What a robot supplies to the runtime, and the one-line refusal of a policy that observes more.

Each observation term of the contract says what supplies it on a robot (``contract/terms.py``: ``Term.source``,
one of ``SOURCES``): the joint encoders, the IMU, an estimator, perception, or the operator and the runtime
themselves. A robot's ``Supplies`` names the sources it has; ``check`` refuses, before anything moves, a policy
that observes a term whose source the robot lacks, in one line that names the term and the alternatives.

    from deploy.runtime.supply import LOW_STATE
    Runtime(policy, MyGo2(), supplies=LOW_STATE)     # a policy observing base_lin_vel is refused here
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.errors import UserError
from contract.terms import SOURCES, TERMS


@dataclass(frozen=True)
class Supplies:
    """The sources one kind of robot has (beyond the operator and the runtime, which every robot has)."""

    name: str
    """The robot or interface, in words (the refusal names it)."""
    sources: tuple[str, ...]
    """Names of ``contract.terms.SOURCES`` the robot supplies."""

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in SOURCES]
        if unknown:
            raise UserError(f"robot profile {self.name!r}: unknown source(s) {', '.join(unknown)}; known: "
                            f"{', '.join(SOURCES)}")

    def has(self, source: str) -> bool:
        """Whether a term of ``source`` can be built for this robot."""
        return not SOURCES[source].robot or source in self.sources


LOW_STATE = Supplies("a Unitree low state (rt/lowstate: joint state and IMU)", ("joint_state", "imu"))
"""What a Unitree Go2 / G1 / H1 low state carries: joint positions and velocities, the IMU's orientation and gyro;
no base velocity, no height map."""
SIMULATED = Supplies("the simulated robot (joint state, IMU, a base velocity estimate, heights)",
                     ("joint_state", "imu", "estimator", "perception"))
"""The rehearsal's simulated robot by default: it also sends the true base velocity and heights, with noise."""
PROFILES: dict[str, Supplies] = {"simulated": SIMULATED, "low-state": LOW_STATE}
"""The profiles the rehearsal offers by name (``--supplies``)."""


def lacking(meta: dict[str, Any], supplies: Supplies) -> list[str]:
    """The policy's observation terms (``obs_layout``) whose source ``supplies`` lacks, in layout order."""
    out = []
    for name, _ in meta.get("obs_layout", []):
        term = TERMS.get(str(name))
        if term is not None and not supplies.has(term.source):
            out.append(str(name))
    return out


def check(meta: dict[str, Any], supplies: Supplies, where: str = "runtime") -> None:
    """One UserError line when the policy observes a term ``supplies`` lacks: the term, what supplies it, what the
    robot has and the alternatives."""
    missing = lacking(meta, supplies)
    if not missing:
        return
    name = missing[0]
    source = TERMS[name].source
    has = ", ".join(supplies.sources) or "nothing"
    more = f" (also: {', '.join(missing[1:])})" if len(missing) > 1 else ""
    raise UserError(f"{where}: the policy of task {meta.get('task')!r} observes {name}{more}, which "
                    f"{SOURCES[source].meaning.split(' (')[0]} supplies ('{source}'), and {supplies.name} supplies "
                    f"{has} only; instead: {SOURCES[source].instead.format(term=name)}")
