"""MJX backend (mujoco-mjx, JAX): ``jit(vmap(substeps))`` on the env's device, state handed to torch by DLPack.

On a GPU ``env.backend=auto`` picks it only when MuJoCo Warp is not installed (``registry.py``); on the CPU native
MuJoCo is several times faster.

All substeps of a control step run inside one compiled call; per-simulation model fields (friction, masses,
gains) are batched arrays given to that call, so domain randomization needs no recompilation. Reset and
model-field writes take full-size masks, so every compiled function sees one shape for the whole run.

JAX is imported here only: the CPU path never pays for it. Before the import we stop JAX from preallocating
most of the GPU memory (torch needs it) and turn on JAX's persistent compilation cache, which cuts a repeat
compile from many seconds to about two.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import torch

from contract.errors import UserError
from envs.bridge import to_jax, to_torch
from envs.physics.base import STATE_FIELDS, PhysicsReadout, PhysicsRequest

CACHE_DIR = Path(os.environ.get("LEGGED_MJX_JAX_CACHE", Path.home() / ".cache" / "legged-mjx" / "jax"))
"""JAX persistent compilation cache (override with the LEGGED_MJX_JAX_CACHE environment variable)."""


def _import_jax() -> tuple[Any, Any, Any]:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
        from mujoco import mjx
    except ImportError as e:  # pragma: no cover - depends on the install
        from contract.errors import UserError

        raise UserError(f"env.backend='mjx' needs JAX and mujoco-mjx ({e}); install them with "
                        "pip install -e '.[mjx]', or use env.backend=native") from e
    jax.config.update("jax_compilation_cache_dir", str(CACHE_DIR))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    return jax, jnp, mjx


def jax_device_for(device: torch.device) -> Any:
    """The JAX device that shares memory with a torch device."""
    jax, _, _ = _import_jax()
    if device.type == "cuda":
        gpus = jax.devices("gpu")
        return gpus[device.index or 0]
    return jax.devices("cpu")[0]


def _reset_fn(jnp: Any, fresh_state: dict[str, Any], num_envs: int) -> Any:
    """``reset(state, mask, qpos, qvel)``: the masked rows of the STATE_FIELDS restarted at qpos / qvel."""

    def reset(state: dict, mask: Any, qpos: Any, qvel: Any) -> dict:
        fresh = {**fresh_state, "qpos": qpos, "qvel": qvel}

        def pick(new: Any, old: Any) -> Any:
            m = mask.reshape((num_envs,) + (1,) * (old.ndim - 1))
            return jnp.where(m, new, old)

        return {f: pick(fresh[f], state[f]) for f in STATE_FIELDS}

    return reset


def _set_fields_fn(jnp: Any, num_envs: int) -> Any:
    """``set_fields(fields, mask, values)``: the masked rows of the named model fields replaced."""

    def set_fields(fields: dict, mask: Any, values: dict) -> dict:
        out = dict(fields)
        for k, v in values.items():
            m = mask.reshape((num_envs,) + (1,) * (v.ndim - 1))
            out[k] = jnp.where(m, v.astype(fields[k].dtype), fields[k])
        return out

    return set_fields


class MjxPhysics:
    """``num_envs`` MJX simulations of ``model`` on the JAX device matching ``device``."""

    def __init__(self, model: mujoco.MjModel, num_envs: int, nsubsteps: int, model_fields: tuple[str, ...] = (),
                 device: torch.device | str = "cpu", impl: str = "jax"):
        jax, jnp, mjx = _import_jax()
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.nsubsteps = nsubsteps
        jdev = jax_device_for(self.device)
        data_kwargs: dict[str, Any] = {}
        if impl == "warp":  # MJX-Warp needs its contact and constraint buffers sized, else contacts are dropped
            data_kwargs = {"naconmax": 16 * num_envs, "njmax": 64}
        try:
            mx = mjx.put_model(model, device=jdev, impl=impl)
        except NotImplementedError as e:  # a geom pair or feature MJX lacks: one line, before any compile
            raise UserError(f"env.backend 'mjx': MJX ({impl}) cannot simulate this model ({e}); use env.backend "
                            "native or warp") from None
        d0 = mjx.make_data(mx, device=jdev, **data_kwargs)
        batched = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (num_envs,) + x.shape).copy(), d0)
        # The simulation state is kept as the flat list of the Data pytree's arrays, and the model is a constant
        # of the compiled step: passing the Model and the Data as pytrees made every call flatten and hash them
        # in Python (a step call took 2.0 ms to return, now 0.9-1.2 ms, with JAX on the CPU at 16 envs).
        paths_leaves, treedef = jax.tree_util.tree_flatten_with_path(batched)
        self._leaves = [x for _, x in paths_leaves]
        self._slot = {jax.tree_util.keystr(path).lstrip("."): i for i, (path, _) in enumerate(paths_leaves)}
        self.fields = {name: jnp.broadcast_to(getattr(mx, name), (num_envs,) + getattr(mx, name).shape).copy()
                       for name in model_fields}

        def one_env(fields: dict, leaves: list, ctrl: Any) -> list:
            m = mx.replace(**fields)
            d = jax.tree_util.tree_unflatten(treedef, leaves).replace(ctrl=ctrl)
            d = jax.lax.fori_loop(0, nsubsteps, lambda _, x: mjx.step(m, x), d)
            return jax.tree_util.tree_leaves(d)

        self._step = jax.jit(jax.vmap(one_env))
        # Resets and pushes take and return the state rows only (derived fields stay until the next step
        # recomputes them). No buffer donation: the task holds DLPack views of these arrays across the call.
        self._reset = jax.jit(_reset_fn(jnp, {f: getattr(d0, f) for f in STATE_FIELDS}, num_envs))
        self._set_velocity = jax.jit(lambda qvel_old, mask, qvel: jnp.where(mask[:, None], qvel, qvel_old))
        self._set_fields = jax.jit(_set_fields_fn(jnp, num_envs))

    def _get(self, name: str) -> Any:
        return self._leaves[self._slot[name]]

    def _put(self, name: str, value: Any) -> None:
        self._leaves[self._slot[name]] = value

    def step(self, ctrl: torch.Tensor) -> None:
        self._leaves = self._step(self.fields, self._leaves, to_jax(ctrl.float()))

    def read(self) -> PhysicsReadout:
        return PhysicsReadout(*(to_torch(self._get(f)) for f in ("qpos", "qvel", "sensordata", "actuator_force")))

    def reset(self, mask: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor) -> None:
        state = self._reset({f: self._get(f) for f in STATE_FIELDS}, to_jax(mask), to_jax(qpos.float()),
                            to_jax(qvel.float()))
        for f, value in state.items():
            self._put(f, value)

    def set_velocity(self, mask: torch.Tensor, qvel: torch.Tensor) -> None:
        self._put("qvel", self._set_velocity(self._get("qvel"), to_jax(mask), to_jax(qvel.float())))

    def set_model_fields(self, mask: torch.Tensor, values: dict[str, torch.Tensor]) -> None:
        self.fields = self._set_fields(self.fields, to_jax(mask), {k: to_jax(v.float()) for k, v in values.items()})

    def state_dict(self) -> dict[str, torch.Tensor]:
        arrays = {**{f: self._get(f) for f in STATE_FIELDS}, **self.fields}
        return {k: torch.from_numpy(np.array(v)) for k, v in arrays.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        import jax

        jdev = jax_device_for(self.device)

        def put(name: str, like: Any) -> Any:  # saved arrays back onto the device, in the dtype the backend uses
            return jax.device_put(state[name].numpy().astype(like.dtype), jdev)

        for f in STATE_FIELDS:
            self._put(f, put(f, self._get(f)))
        self.fields = {k: put(k, v) for k, v in self.fields.items()}


def create(r: PhysicsRequest) -> MjxPhysics:
    """The registry's constructor (``envs/physics/registry.py``)."""
    return MjxPhysics(r.model, r.num_envs, r.nsubsteps, r.model_fields, device=r.device, impl=r.mjx_impl)
