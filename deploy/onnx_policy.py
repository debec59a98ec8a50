"""An exported policy file and its metadata, run by onnxruntime (no torch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from contract import schema
from contract.errors import UserError


def _decode(value: str) -> Any:
    """Metadata values are JSON, except plain strings, which are stored as they are."""
    try:
        return json.loads(value)
    except ValueError:
        return value


class OnnxPolicy:
    """``policy(obs [batch, obs_dim] float32, or [batch, C, H, W] uint8 for pixels) -> actions``;
    ``policy.metadata`` holds the decoded metadata.

    A recurrent policy (metadata ``recurrent``) keeps its state between calls, one row per env of the batch, and
    starts from zeros; call ``reset()`` at the start of every episode (``reset(done)`` with a bool mask over the
    batch zeroes the state of those envs only). A call with another batch size starts from zeros.
    """

    def __init__(self, path: str | Path, threads: int | None = None):
        """``threads``: onnxruntime's intra-op threads, without spinning (a robot's control process: 1); None:
        onnxruntime's default (every core, spinning)."""
        import onnxruntime as ort

        path = Path(path)
        if not path.is_file():
            raise UserError(f"policy file {path} does not exist")
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own exception types for unreadable files
            raise UserError(f"policy file {path} is not a readable ONNX model ({type(e).__name__})") from None
        raw = self.session.get_modelmeta().custom_metadata_map
        schema.check_version(raw.get("format"), f"policy file {path}")
        self.metadata = schema.upgrade({k: _decode(v) for k, v in raw.items()}, f"policy file {path}")
        self.obs_dim = int(self.metadata["obs_dim"])
        self.obs_shape = tuple(self.metadata.get("obs_shape", [self.obs_dim]))
        self.obs_dtype = np.dtype(self.metadata.get("obs_dtype", "float32"))
        rec = self.metadata.get("recurrent")
        self.state_inputs: list[str] = list(rec["state_inputs"]) if rec else []
        self.state_outputs: list[str] = list(rec["state_outputs"]) if rec else []
        self.state_shape: tuple[int, ...] = (int(rec["layers"]), int(rec["size"])) if rec else ()
        """Per-env shape of each state tensor, ``(layers, size)`` (recurrent policies only)."""
        self.state: list[np.ndarray] = []
        """The current state tensors ``[batch, layers, size]``, in ``state_inputs`` order (empty: zeros next call)."""

    @property
    def recurrent(self) -> bool:
        return bool(self.state_inputs)

    def reset(self, done: np.ndarray | None = None) -> None:
        """Zero the recurrent state: of every env (``done`` None), or of the envs where ``done`` is True."""
        if done is None or not self.state:
            self.state = []
            return
        mask = np.asarray(done, dtype=bool).reshape(-1)
        for s in self.state:
            s[mask] = 0.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=self.obs_dtype).reshape(-1, *self.obs_shape)
        if not self.recurrent:
            return self.session.run(["actions"], {"obs": obs})[0]
        if not self.state or self.state[0].shape[0] != obs.shape[0]:
            self.state = [np.zeros((obs.shape[0], *self.state_shape), np.float32) for _ in self.state_inputs]
        state = dict(zip(self.state_inputs, self.state, strict=True))
        out = self.session.run(["actions", *self.state_outputs], {"obs": obs, **state})
        self.state = [np.array(x, dtype=np.float32) for x in out[1:]]
        return out[0]
