"""An exported policy file and its metadata, run by onnxruntime (no torch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from rl_core.errors import UserError
from rl_core.policy_format import FORMAT



def _decode(value: str) -> Any:
    """Metadata values are JSON, except plain strings, which are stored as they are."""
    try:
        return json.loads(value)
    except ValueError:
        return value


class OnnxPolicy:
    """``policy(obs [batch, obs_dim] float32, or [batch, C, H, W] uint8 for pixels) -> actions``; ``policy.metadata`` holds the decoded metadata."""

    def __init__(self, path: str | Path):
        import onnxruntime as ort

        path = Path(path)
        if not path.is_file():
            raise UserError(f"policy file {path} does not exist")
        try:
            self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own exception types for unreadable files
            raise UserError(f"policy file {path} is not a readable ONNX model ({type(e).__name__})") from None
        raw = self.session.get_modelmeta().custom_metadata_map
        if raw.get("format") != FORMAT:
            raise UserError(f"policy file {path} was not exported by legged-mjx (metadata format={raw.get('format')!r}, "
                            f"expected {FORMAT!r})")
        self.metadata = {k: _decode(v) for k, v in raw.items()}
        self.obs_dim = int(self.metadata["obs_dim"])
        self.obs_shape = tuple(self.metadata.get("obs_shape", [self.obs_dim]))
        self.obs_dtype = np.dtype(self.metadata.get("obs_dtype", "float32"))

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=self.obs_dtype).reshape(-1, *self.obs_shape)
        return self.session.run(["actions"], {"obs": obs})[0]
