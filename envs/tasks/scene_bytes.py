"""A compiled scene as text for an exported policy's metadata (``scene_mjb``)."""

from __future__ import annotations

import base64
import zlib

import mujoco
import numpy as np


def scene_bytes(model: mujoco.MjModel) -> str:
    """The compiled model as MJB bytes, zlib-compressed and base64-encoded (an export passes the scene without what
    only drawing uses: ``envs/scenes/physics_only.py``)."""
    buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    return base64.b64encode(zlib.compress(buffer.tobytes(), 9)).decode("ascii")
