"""``algorithm.name`` -> the algorithm class: the one place that knows them all (the runner knows none)."""

from __future__ import annotations

from rl_core.algorithm import Algorithm
from rl_core.amp import AmpPPO
from rl_core.distillation import Distillation
from rl_core.ppo import PPO

ALGORITHMS: dict[str, type[Algorithm]] = {"ppo": PPO, "distillation": Distillation, "amp": AmpPPO}


def algorithm_class(name: str) -> type[Algorithm]:
    return ALGORITHMS[name]
