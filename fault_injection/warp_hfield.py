"""One saved quadruped-rough world in which MuJoCo Warp's heightfield collision puts a foot 1.85 m inside the
terrain (issue 30), for ``tools/experiments/warp_hfield_repro.py`` and ``tests/envs/test_warp_rough.py``.

``warp_hfield_state.json``: the world's qpos, qvel, warm start, time, the controls of the step and its randomized
model fields (friction, masses, gains), captured on Warp's CPU device before the control step (128 worlds,
random actions, a push every second, seed 1, control step 8, world 51).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mujoco

STATE = Path(__file__).with_name("warp_hfield_state.json")


def load_state(path: Path = STATE) -> dict[str, Any]:
    return json.loads(path.read_text())


def scene() -> mujoco.MjModel:
    """quadruped-rough's compiled scene (the generated terrain is deterministic)."""
    from configs.catalog import get_task
    from configs.quadruped import ROUGH_QUADRUPED
    from envs.scenes.assemble import build
    from envs.tasks.locomotion.config import LocomotionEnvConfig
    from envs.terrain.generator import generate

    cfg = get_task("quadruped-rough").default_config().env
    assert isinstance(cfg, LocomotionEnvConfig)
    return build(ROUGH_QUADRUPED, cfg.scene_options(generate(cfg.terrain))).model
