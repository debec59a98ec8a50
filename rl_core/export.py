"""Export the deterministic policy (observation normalizer + actor + mode) to ONNX and TorchScript, checked.

The exported graph maps ``obs`` float32 ``[batch, obs_dim]`` (raw observations, as the env produces them; pixel
tasks: uint8 ``[batch, C, H, W]``, metadata ``obs_shape`` / ``obs_dtype``) to
``actions``: continuous tasks get the mean action float32 ``[batch, n]`` in the env's action units before any
clipping; discrete tasks get the argmax index int64 ``[batch]``. The batch axis is dynamic. Both exports are
run against torch on random observations right after writing and raise ``ExportError`` if they disagree.

ONNX files carry ``metadata_props`` (string key -> string value): plain strings stay as they are, every other
value is JSON. ``deploy/onnx_policy.py`` reads them back without torch.
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from rl_core.errors import UserError
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.normalizer import RunningNormalizer
from rl_core.policy_format import FORMAT

PARITY_SAMPLES = 1000
"""Random observations each export is checked on."""
PARITY_ATOL = 1e-5
"""Largest allowed |exported - torch| over those observations (continuous actions)."""
METADATA_FILE = "metadata.json"
"""Name of the metadata entry in a TorchScript file's extra files."""


class ExportError(UserError):
    """An exported policy that does not reproduce the torch policy."""


class InferencePolicy(nn.Module):
    """Raw observation -> deterministic action: the frozen normalizer, the actor, then mean / argmax."""

    def __init__(self, policy: ActorCritic):
        super().__init__()
        self.normalizer = policy.obs_normalizer
        self.encoder = policy.encoder
        self.actor = policy.actor
        self.head = policy.head
        self.discrete = policy.action_spec.discrete

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out = self.actor(self.encoder(self.normalizer(obs)))
        return out.argmax(-1) if self.discrete else self.head.mode(self.head.params(out))


def _probe_observations(policy: ActorCritic, n: int, seed: int) -> torch.Tensor:
    """Observations spread around (and past the clip range of) the training distribution."""
    g = torch.Generator().manual_seed(seed)
    if policy.obs_dtype == torch.uint8:  # images: every pixel value
        return torch.randint(0, 256, (n, *policy.obs_shape), generator=g, dtype=torch.uint8)
    z = torch.randn(n, policy.obs_dim, generator=g, dtype=torch.float64) * 2.0
    norm = policy.obs_normalizer
    if isinstance(norm, RunningNormalizer):
        z = norm.mean + z * torch.sqrt(norm.var + norm.eps)
    return z.float()


@torch.no_grad()
def check_parity(policy: ActorCritic, actions: np.ndarray, obs: torch.Tensor, what: str) -> float:
    """Compare exported actions on ``obs`` with ``policy.act_inference`` (what play.py evaluates).

    Continuous: returns max |exported - torch|. Discrete: every index must match unless torch's logits tie.
    """
    expected = policy.act_inference(obs).numpy()
    if policy.action_spec.discrete:
        logits = policy.dist_params(policy.obs_normalizer(obs)).numpy()
        picked = np.take_along_axis(logits, actions.reshape(-1, 1).astype(np.int64), axis=1)[:, 0]
        bad = int(((actions != expected[:, 0]) & (logits.max(1) - picked > PARITY_ATOL)).sum())
        if bad:
            raise ExportError(f"export check failed: {what} picks a different action than torch on {bad} of "
                              f"{len(obs)} observations")
        return 0.0
    err = float(np.abs(actions.astype(np.float64) - expected).max())
    if not err <= PARITY_ATOL:
        raise ExportError(f"export check failed: {what} differs from torch by {err:.3g} (allowed {PARITY_ATOL:g})")
    return err


def _example_input(policy: ActorCritic) -> torch.Tensor:
    return torch.zeros(2, *policy.obs_shape, dtype=policy.obs_dtype)


def _encode(metadata: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()}


def export_onnx(policy: ActorCritic, path: str | Path, metadata: dict[str, Any], seed: int = 0) -> float:
    """Write ``path`` (ONNX) with ``metadata`` and check it with onnxruntime; returns the max error."""
    import onnx
    import onnxruntime as ort

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = InferencePolicy(policy).eval()
    logging.getLogger("torch.onnx._internal.exporter._registration").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(module, (_example_input(policy),), dynamo=True, input_names=["obs"],
                                    output_names=["actions"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                                    verbose=False)
    assert program is not None  # dynamo=True always returns the program
    model = program.model_proto
    for key, value in _encode(metadata).items():
        model.metadata_props.add(key=key, value=value)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    obs = _probe_observations(policy, PARITY_SAMPLES, seed)
    return check_parity(policy, session.run(["actions"], {"obs": obs.numpy()})[0], obs, f"ONNX file {path}")


def export_jit(policy: ActorCritic, path: str | Path, metadata: dict[str, Any], seed: int = 0) -> float:
    """Write a TorchScript file (metadata as ``metadata.json`` extra file) and check it; returns the max error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = InferencePolicy(policy).eval()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # torch.jit is deprecated in favour of torch.export, but robots still load it
        traced = torch.jit.trace(module, _example_input(policy))
        torch.jit.save(traced, str(path), _extra_files={METADATA_FILE: json.dumps(metadata)})
        loaded = torch.jit.load(str(path))
        obs = _probe_observations(policy, PARITY_SAMPLES, seed)
        return check_parity(policy, loaded(obs).numpy(), obs, f"TorchScript file {path}")


def policy_metadata(task: str, iteration: int, policy: ActorCritic, env_metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata of an exported policy: what it is, its input and output, and the env's deployment facts."""
    spec = policy.action_spec
    return {"format": FORMAT, "task": task, "iteration": iteration, "obs_dim": policy.obs_dim,
            "obs_shape": list(policy.obs_shape), "obs_dtype": str(policy.obs_dtype).removeprefix("torch."),
            "action_type": "discrete" if spec.discrete else "continuous", "action_dim": spec.n,
            "actions": ("argmax index int64 [batch]" if spec.discrete
                        else "mean action float32 [batch, action_dim], before clipping"),
            **env_metadata}
