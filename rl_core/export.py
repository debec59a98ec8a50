"""Export the deterministic policy (observation normalizer + actor + mode) to ONNX and TorchScript, checked.

The exported graph maps ``obs`` float32 ``[batch, obs_dim]`` (raw observations, as the env produces them; pixel
tasks: uint8 ``[batch, C, H, W]``, metadata ``obs_shape`` / ``obs_dtype``) to
``actions``: continuous tasks get the mean action float32 ``[batch, n]`` in the env's action units before any
clipping; discrete tasks get the argmax index int64 ``[batch]``. The batch axis is dynamic. Both exports are
run against torch on random observations right after writing and raise ``ExportError`` if they disagree.

A policy that reads an observation history (an env with ``StackedObservations``: its observation is its last
``frames`` frames, oldest first) is exported the same way, its past frames as the state: ``obs, history_in ->
actions, history_out`` with ``obs`` one frame ``[batch, frame]`` and the states ``[batch, frames - 1, frame]``
(memory ``history`` in the metadata; zeros at an episode's start, as the env's history starts). A robot then feeds
one frame per step, like any recurrent policy.

Recurrent policies (``policy.memory`` lstm / gru) carry their state as explicit extra inputs and outputs:
``obs, h_in[, c_in] -> actions, h_out[, c_out]`` with every state float32 ``[batch, memory_layers, memory_size]``
(``c_*`` for an LSTM only). Feed zeros at the start of each episode and the ``*_out`` of one step as the ``*_in``
of the next. The metadata entry ``recurrent`` describes them (names, shape, reset rule). Their check runs a
sequence of ``PARITY_SEQUENCE_STEPS`` steps, carrying the state in both torch and the exported file.

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

from contract.errors import UserError
from contract.policy_format import FORMAT
from rl_core.modules.actor_critic import ActorCritic
from rl_core.modules.normalizer import RunningNormalizer

PARITY_SAMPLES = 1000
"""Random observations each export is checked on."""
PARITY_ATOL = 1e-5
"""Largest allowed |exported - torch| over those observations (continuous actions)."""
PARITY_SEQUENCE_STEPS = 200
"""Length of the observation sequence a recurrent export is checked on (the state carried across it)."""
PARITY_SEQUENCE_BATCH = 8
"""Envs in that sequence check."""
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


class RecurrentInferencePolicy(nn.Module):
    """``(obs, h_in[, c_in]) -> (actions, h_out[, c_out])``: the frozen normalizer, the actor memory, the actor MLP,
    then mean / argmax. States are batch-first ``[batch, layers, size]`` (``c`` for an LSTM only)."""

    def __init__(self, policy: ActorCritic):
        super().__init__()
        assert policy.actor_memory is not None
        self.normalizer = policy.obs_normalizer
        self.encoder = policy.encoder
        self.memory = policy.actor_memory
        self.actor = policy.actor
        self.head = policy.head
        self.discrete = policy.action_spec.discrete
        self.lstm = policy.actor_memory.kind == "lstm"

    def forward(self, obs: torch.Tensor, h_in: torch.Tensor, c_in: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, ...]:
        h = h_in.transpose(0, 1)
        state = torch.stack([h, c_in.transpose(0, 1)]) if c_in is not None else h.unsqueeze(0)
        y, nxt = self.memory(self.encoder(self.normalizer(obs)), state)
        out = self.actor(y)
        actions = out.argmax(-1) if self.discrete else self.head.mode(self.head.params(out))
        if self.lstm:
            return actions, nxt[0].transpose(0, 1), nxt[1].transpose(0, 1)
        return actions, nxt[0].transpose(0, 1)


class HistoryInferencePolicy(nn.Module):
    """``(obs, history_in) -> (actions, history_out)`` of a policy that reads its last ``frames`` observations:
    ``history_in`` ``[batch, frames - 1, frame]`` holds the previous frames, oldest first; they are stacked with
    ``obs`` ``[batch, frame]`` in front of the frozen normalizer, and ``history_out`` drops the oldest."""

    def __init__(self, policy: ActorCritic, frames: int):
        super().__init__()
        self.inner = InferencePolicy(policy)
        self.frames = frames

    def forward(self, obs: torch.Tensor, history_in: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        stacked = torch.cat([history_in.flatten(1), obs], dim=1)
        return self.inner(stacked), torch.cat([history_in[:, 1:], obs.unsqueeze(1)], dim=1)


def history_frames(metadata: dict[str, Any]) -> int:
    """Frames of the observation history an export's metadata declares (1: none)."""
    rec = metadata.get("recurrent")
    return int(rec["layers"]) + 1 if rec and rec.get("memory") == "history" else 1


@torch.no_grad()
def check_history_parity(policy: ActorCritic, frames: int, step: Any, seed: int, what: str) -> float:
    """``step(frame, states) -> (actions, states)`` (numpy, exported layout) against ``policy.act_inference`` on the
    stacked frames, over a sequence of ``PARITY_SEQUENCE_STEPS`` frames of ``PARITY_SEQUENCE_BATCH`` envs from
    zeros; returns the max |difference| of the actions and states, ExportError beyond ``PARITY_ATOL``."""
    width = policy.obs_dim // frames
    seq = _probe_observations(policy, PARITY_SEQUENCE_STEPS * PARITY_SEQUENCE_BATCH, seed)[:, -width:]
    seq = seq.reshape(PARITY_SEQUENCE_STEPS, PARITY_SEQUENCE_BATCH, width)
    past = torch.zeros(PARITY_SEQUENCE_BATCH, frames - 1, width)
    states, err = [past.numpy()], 0.0
    for t in range(PARITY_SEQUENCE_STEPS):
        expected = policy.act_inference(torch.cat([past.flatten(1), seq[t]], dim=1)).numpy()
        actions, states = step(seq[t].numpy(), states)
        past = torch.cat([past[:, 1:], seq[t].unsqueeze(1)], dim=1)
        err = max(err, float(np.abs(actions.astype(np.float64) - expected).max()),
                  float(np.abs(states[0].astype(np.float64) - past.numpy()).max()))
        if not err <= PARITY_ATOL:
            raise ExportError(f"export check failed: {what} differs from torch by {err:.3g} (allowed {PARITY_ATOL:g}) "
                              f"at step {t} of a {PARITY_SEQUENCE_STEPS}-step sequence")
    return err


def state_names(policy: ActorCritic) -> tuple[list[str], list[str]]:
    """Names of the exported state inputs and outputs of a recurrent policy (empty lists without memory)."""
    if policy.actor_memory is None:
        return [], []
    if policy.actor_memory.kind == "lstm":
        return ["h_in", "c_in"], ["h_out", "c_out"]
    return ["h_in"], ["h_out"]


def _state_arrays(policy: ActorCritic, state: torch.Tensor) -> list[np.ndarray]:
    """Torch actor state ``[S, L, B, H]`` as the exported inputs ``[B, L, H]`` each."""
    return [state[i].transpose(0, 1).contiguous().numpy() for i in range(state.shape[0])]


@torch.no_grad()
def check_sequence_parity(policy: ActorCritic, step: Any, steps: int, batch: int, seed: int, what: str) -> float:
    """Run ``steps`` observations of ``batch`` envs through torch and through ``step(obs, states) -> (actions,
    states)`` (numpy, exported layout), each carrying its own state; returns the max |difference| of the actions
    (continuous) and states. Raises ExportError beyond ``PARITY_ATOL`` (discrete: on a differing index that is
    not a tie of the logits). Runs on one torch thread (restored after): a sequential loop of tiny ops is fastest
    that way and does not stall on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _sequence_parity(policy, step, steps, batch, seed, what)
    finally:
        torch.set_num_threads(threads)


def _sequence_parity(policy: ActorCritic, step: Any, steps: int, batch: int, seed: int, what: str) -> float:
    obs_seq = _probe_observations(policy, steps * batch, seed).reshape(steps, batch, *policy.obs_shape)
    state = policy.init_actor_hidden(batch)
    states = _state_arrays(policy, state)
    assert policy.actor_memory is not None
    err = 0.0
    for t in range(steps):
        obs = obs_seq[t]
        y, state = policy.actor_memory(policy.encoder(policy.obs_normalizer(obs)), state)
        out = policy.actor(y)
        actions, states = step(obs.numpy(), states)
        if policy.action_spec.discrete:
            logits = out.numpy()
            picked = np.take_along_axis(logits, actions.reshape(-1, 1).astype(np.int64), axis=1)[:, 0]
            bad = int(((actions != logits.argmax(1)) & (logits.max(1) - picked > PARITY_ATOL)).sum())
            if bad:
                raise ExportError(f"export check failed: {what} picks a different action than torch on {bad} of "
                                  f"{batch} envs at step {t} of a {steps}-step sequence")
        else:
            expected = policy.head.mode(policy.head.params(out)).numpy()
            err = max(err, float(np.abs(actions.astype(np.float64) - expected).max()))
        for got, want in zip(states, _state_arrays(policy, state), strict=True):
            err = max(err, float(np.abs(got.astype(np.float64) - want).max()))
        if not err <= PARITY_ATOL:
            raise ExportError(f"export check failed: {what} differs from torch by {err:.3g} (allowed {PARITY_ATOL:g}) "
                              f"at step {t} of a {steps}-step sequence")
    return err


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


def _inference_module(policy: ActorCritic, frames: int = 1
                      ) -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """The module to export, example inputs, input names and output names (``frames``: of an observation
    history)."""
    if frames > 1:
        width = policy.obs_dim // frames
        example_h = (torch.zeros(2, width), torch.zeros(2, frames - 1, width))
        return HistoryInferencePolicy(policy, frames).eval(), example_h, ["obs", "history_in"], ["actions",
                                                                                              "history_out"]
    if not policy.is_recurrent:
        return InferencePolicy(policy).eval(), (_example_input(policy),), ["obs"], ["actions"]
    ins, outs = state_names(policy)
    example = (_example_input(policy), *_state_arrays_torch(policy, 2))
    return RecurrentInferencePolicy(policy).eval(), example, ["obs", *ins], ["actions", *outs]


def _state_arrays_torch(policy: ActorCritic, batch: int) -> list[torch.Tensor]:
    state = policy.init_actor_hidden(batch)
    return [state[i].transpose(0, 1).contiguous() for i in range(state.shape[0])]


def _encode(metadata: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()}


def export_onnx(policy: ActorCritic, path: str | Path, metadata: dict[str, Any], seed: int = 0) -> float:
    """Write ``path`` (ONNX) with ``metadata`` and check it with onnxruntime; returns the max error."""
    import onnx
    import onnxruntime as ort

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = history_frames(metadata)
    module, example, input_names, output_names = _inference_module(policy, frames)
    logging.getLogger("torch.onnx._internal.exporter._registration").setLevel(logging.ERROR)
    batch = torch.export.Dim("batch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(module, example, dynamo=True, input_names=input_names,
                                    output_names=output_names, dynamic_shapes=tuple({0: batch} for _ in example),
                                    verbose=False)
    assert program is not None  # dynamo=True always returns the program
    model = program.model_proto
    for key, value in _encode(metadata).items():
        model.metadata_props.add(key=key, value=value)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    if policy.is_recurrent or frames > 1:
        def step(obs: np.ndarray, states: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
            out = session.run(output_names, {"obs": obs, **dict(zip(input_names[1:], states, strict=True))})
            return out[0], out[1:]

        if frames > 1:
            return check_history_parity(policy, frames, step, seed, f"ONNX file {path}")
        return check_sequence_parity(policy, step, PARITY_SEQUENCE_STEPS, PARITY_SEQUENCE_BATCH, seed,
                                     f"ONNX file {path}")
    obs = _probe_observations(policy, PARITY_SAMPLES, seed)
    return check_parity(policy, session.run(["actions"], {"obs": obs.numpy()})[0], obs, f"ONNX file {path}")


def export_jit(policy: ActorCritic, path: str | Path, metadata: dict[str, Any], seed: int = 0) -> float:
    """Write a TorchScript file (metadata as ``metadata.json`` extra file) and check it; returns the max error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = history_frames(metadata)
    module, example, _, _ = _inference_module(policy, frames)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # torch.jit is deprecated in favour of torch.export, but robots still load it
        traced = torch.jit.trace(module, example)
        torch.jit.save(traced, str(path), _extra_files={METADATA_FILE: json.dumps(metadata)})
        loaded = torch.jit.load(str(path))
        if policy.is_recurrent or frames > 1:
            def step(obs: np.ndarray, states: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
                out = loaded(torch.from_numpy(obs), *(torch.from_numpy(x) for x in states))
                return out[0].numpy(), [x.numpy() for x in out[1:]]

            if frames > 1:
                return check_history_parity(policy, frames, step, seed, f"TorchScript file {path}")
            return check_sequence_parity(policy, step, PARITY_SEQUENCE_STEPS, PARITY_SEQUENCE_BATCH, seed,
                                         f"TorchScript file {path}")
        obs = _probe_observations(policy, PARITY_SAMPLES, seed)
        return check_parity(policy, loaded(obs).numpy(), obs, f"TorchScript file {path}")


def policy_metadata(task: str, iteration: int, policy: ActorCritic, env_metadata: dict[str, Any],
                    frames: int = 1) -> dict[str, Any]:
    """The metadata of an exported policy: what it is, its input and output, and the env's deployment facts
    (``frames``: the env's observation history, ``StackedObservations``; the file then reads one frame)."""
    spec = policy.action_spec
    if frames > 1 and (policy.is_recurrent or policy.obs_dim % frames or len(policy.obs_shape) != 1):
        raise ExportError(f"export: an observation history of {frames} frames needs a memoryless policy on vector "
                          f"observations a multiple of {frames} wide (obs_dim {policy.obs_dim})")
    width = policy.obs_dim // frames
    return {"format": FORMAT, "task": task, "iteration": iteration, "obs_dim": width,
            "obs_shape": [width] if frames > 1 else list(policy.obs_shape),
            "obs_dtype": str(policy.obs_dtype).removeprefix("torch."),
            "action_type": "discrete" if spec.discrete else "continuous", "action_dim": spec.n,
            "actions": ("argmax index int64 [batch]" if spec.discrete
                        else "mean action float32 [batch, action_dim], before clipping"),
            **(history_metadata(frames, width) if frames > 1 else recurrent_metadata(policy)), **env_metadata}


def history_metadata(frames: int, width: int) -> dict[str, Any]:
    """``{"recurrent": ...}`` of a policy that reads its last ``frames`` observations of ``width`` values: the
    past frames are its state (memory ``history``)."""
    return {"recurrent": {"memory": "history", "layers": frames - 1, "size": width, "state_inputs": ["history_in"],
                          "state_outputs": ["history_out"], "state_shape": ["batch", frames - 1, width],
                          "state_dtype": "float32",
                          "reset": "zeros at the start of every episode (per env); otherwise feed each *_out back "
                                   "as the next step's *_in (history_out: the last frames - 1 observations, oldest "
                                   "first)"}}


def recurrent_metadata(policy: ActorCritic) -> dict[str, Any]:
    """``{"recurrent": ...}`` describing the exported state inputs / outputs (empty for memoryless policies)."""
    if policy.actor_memory is None:
        return {}
    ins, outs = state_names(policy)
    m = policy.actor_memory
    return {"recurrent": {"memory": m.kind, "layers": m.layers, "size": m.size, "state_inputs": ins,
                          "state_outputs": outs, "state_shape": ["batch", m.layers, m.size], "state_dtype": "float32",
                          "reset": "zeros at the start of every episode (per env); otherwise feed each *_out back "
                                   "as the next step's *_in"}}
