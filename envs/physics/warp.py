"""MuJoCo Warp backend (``mujoco-warp`` + ``warp-lang``) driven from torch, with no JAX.

- State, sensors and the per-simulation model fields are zero-copy torch views of the Warp arrays
  (``wp.to_torch``); the task reads and writes them in place, so nothing is copied between the frameworks.
- Per-simulation model fields (friction, masses, gains) are world-batched arrays of the Warp model
  (``put_model(..., batch_sizes=...)``): domain randomization writes into them, nothing recompiles.
- The ``nsubsteps`` physics steps of a control step are captured once as a graph and replayed
  (``wp.capture_launch``), on torch's current stream, so torch's writes before a step and reads after it are
  ordered without a host sync. The task logic around it can be a torch CUDA graph of its own
  (``envs/tasks/graphed_step.py``): it reads and writes the same fixed memory.
- Contact and constraint buffers are sized per world (``nconmax`` / ``njmax``; defaults from mujoco_warp's
  own estimate for the model). A world whose buffers overflowed lost contacts or constraints in that step:
  it is reported as ``unstable`` and the task resets it, as it does a diverged one. So is a world with a contact
  deeper than ``MAX_CONTACT_DEPTH`` at the last substep: mujoco_warp 4.0's heightfield collision can report a
  foot 1.85 m inside the terrain and throw the robot off (``tools/experiments/warp_hfield_repro.py``, docs/backends.md).
  Warp does not reset a diverged simulation itself; the task detects NaN / huge velocities, as on MJX.

Warp is imported through ``envs/physics/warp_setup.py`` only (its cache, its modules, the model as training puts
it). The first build of this model's kernels takes about 20 s on the CPU device.
"""

from __future__ import annotations

import os
from typing import Any

import mujoco
import torch

from envs.physics.base import STATE_FIELDS, PhysicsReadout, PhysicsRequest
from envs.physics.warp_setup import import_warp, preload_kernels, put_model

_FATAL_OVERFLOWS = ("NEFC", "NJMAX_NNZ", "BROADPHASE", "NARROWPHASE", "CCD", "HFIELD", "NVMAX", "EPA_HORIZON")
"""Overflow flags that mean a world lost contacts or constraints (the solver-iteration ones only mean it
stopped at its iteration limit, as MuJoCo C does)."""

MAX_CONTACT_DEPTH = 0.1
"""A contact deeper than this (m) is not physics: the world is reported ``unstable`` (MuJoCo C's deepest contact
in the reproduced case was 0.021 m, Warp's 1.853 m)."""

class WarpPhysics:
    """``num_envs`` MuJoCo Warp worlds of ``model`` on ``device`` (cpu or cuda:N), ``nsubsteps`` per ``step``."""

    def __init__(self, model: mujoco.MjModel, num_envs: int, nsubsteps: int, model_fields: tuple[str, ...] = (),
                 device: torch.device | str = "cpu", nconmax: int | None = None, njmax: int | None = None):
        wp, mjw = import_warp()
        self._wp, self._mjw = wp, mjw
        self.num_envs = num_envs
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.nsubsteps = nsubsteps
        self._wdev = wp.device_from_torch(self.device)
        from envs.physics.warp_kernels import KernelWatch

        self.kernels = KernelWatch(wp, mjw, model, self._wdev)
        """The first step's kernel report (``kernels.report`` once the step ran)."""
        self.kernels.start()  # says whether this model's kernels will compile; the first step reports what they did
        self._model, self._buffers = model, (nconmax, njmax)
        choice = os.environ.get("LEGGED_MJX_WARP_PARALLEL_LOAD", "auto")  # auto: on CUDA; 1: also on the CPU; 0: off
        parallel = choice == "1" or (choice == "auto" and self._wdev.is_cuda)
        if not parallel:
            preload_kernels(wp, self._wdev)
        with wp.ScopedDevice(self._wdev):
            self.m = put_model(mjw, model, num_envs, model_fields)
            self.d = mjw.make_data(model, nworld=num_envs, nconmax=nconmax, njmax=njmax)
        if parallel:
            self._load_step_kernels()
        t = wp.to_torch
        self._state = {name: t(getattr(self.d, name)) for name in STATE_FIELDS}
        self._sensordata = t(self.d.sensordata)
        self._actuator_force = t(self.d.actuator_force)
        self._overflow = t(self.d.overflow)
        self._nacon = t(self.d.nacon)
        self._contact_dist = t(self.d.contact.dist)
        self._contact_world = t(self.d.contact.worldid)
        self._contact_slot = torch.arange(self._contact_dist.shape[0], device=self.device)
        self._fatal = int(sum(getattr(mjw.OverflowType, f) for f in _FATAL_OVERFLOWS))
        self._fields = {name: t(getattr(self.m, name)) for name in model_fields}
        self._graph: Any = None
        self._unstable: torch.Tensor | None = None
        """This step's ``unstable`` flags, made by the first read after it (a step's later reads share them)."""
        self._streams: dict[int, Any] = {}

    def scratch_data(self) -> Any:
        """A one-world ``mujoco_warp.Data`` of this model with the run's buffer sizes (for dry runs of a step: the
        module variants a step loads do not depend on the number of worlds)."""
        nconmax, njmax = self._buffers
        with self._wp.ScopedDevice(self._wdev):
            return self._mjw.make_data(self._model, nworld=1, nconmax=nconmax, njmax=njmax)

    def _load_step_kernels(self) -> None:
        """On CUDA: every kernel module variant the first step loads, found by a dry run of the step
        (``envs/physics/warp_variants.py``), loaded (compiled when not cached) in parallel threads, where the step
        would load them one by one (the kernels mujoco_warp generates for a model: 34 for quadruped-flat, 50 s of
        serial compiling on an H100 with an empty cache). ``LEGGED_MJX_WARP_PARALLEL_LOAD=0``: the serial way (``1``:
this way on the CPU device too, where it gains nothing measurable: loading a cached module takes milliseconds)."""
        from envs.physics.warp_variants import load_parallel, predict_for_device

        variants = predict_for_device(self._wp, self._mjw, self.m, self.scratch_data(), self._wdev)
        load_parallel(self._wp, variants, self._wdev, workers=min(8, os.cpu_count() or 1))

    # ------------------------------------------------------------------------------------ stepping
    def _warp_stream(self) -> Any:
        """Torch's current stream as a Warp stream (cached), so both frameworks queue on the same stream."""
        s = torch.cuda.current_stream(self.device)
        ws = self._streams.get(s.cuda_stream)
        if ws is None:
            ws = self._streams[s.cuda_stream] = self._wp.stream_from_torch(s)
        return ws

    def _substeps(self) -> None:
        for _ in range(self.nsubsteps):
            self._mjw.step(self.m, self.d)

    def _capture(self) -> None:
        """Compile (one eager step, then the state is put back) and capture the substeps as a graph."""
        wp = self._wp
        saved = {k: v.clone() for k, v in self._state.items()}
        if self.device.type == "cuda":
            stream = wp.Stream(self._wdev)  # captures cannot run on the legacy default stream
            wp.synchronize_device(self._wdev)
            with wp.ScopedStream(stream):
                self._mjw.step(self.m, self.d)  # loads every kernel before the capture
                with wp.ScopedCapture(stream=stream) as cap:
                    self._substeps()
            wp.synchronize_stream(stream)
        else:
            with wp.ScopedDevice(self._wdev):
                self._mjw.step(self.m, self.d)
                with wp.ScopedCapture() as cap:
                    self._substeps()
        for k, v in self._state.items():  # the warm-up step moved the state: put it back
            v.copy_(saved[k])
        self._graph = cap.graph
        self.kernels.finish()

    def step(self, ctrl: torch.Tensor) -> None:
        wp = self._wp
        if self._graph is None:
            self._capture()
        self._state["ctrl"].copy_(ctrl)
        self._overflow.zero_()
        self._unstable = None
        if self.device.type == "cuda":
            wp.capture_launch(self._graph, stream=self._warp_stream())
        else:
            wp.capture_launch(self._graph)

    def _too_deep(self) -> torch.Tensor:
        """``[N]`` bool: a contact of the last substep deeper than MAX_CONTACT_DEPTH (fixed shapes, no host sync:
        every contact slot is read, those past ``nacon`` with weight 0)."""
        deep = (self._contact_slot < self._nacon) & (self._contact_dist < -MAX_CONTACT_DEPTH)
        world = self._contact_world.long().clamp(0, self.num_envs - 1)
        hits = torch.zeros(self.num_envs, device=self.device).index_add_(0, world, deep.float())
        return hits > 0

    def read(self) -> PhysicsReadout:
        # Copies: the views change in place at the next step, and the task keeps some of these across steps.
        if self._unstable is None:  # once per step: overflow flags and contacts change in step() alone
            self._unstable = ((self._overflow & self._fatal) != 0) | self._too_deep()
        return PhysicsReadout(self._state["qpos"].clone(), self._state["qvel"].clone(), self._sensordata.clone(),
                              self._actuator_force.clone(), self._unstable)

    # ------------------------------------------------------------------------------- state writes
    @staticmethod
    def _where(mask: torch.Tensor, new: torch.Tensor | None, out: torch.Tensor) -> None:
        """``out[mask] = new[mask]`` in place, at fixed shapes (one kernel; ``new`` None: zeros)."""
        m = mask.reshape((-1,) + (1,) * (out.dim() - 1))
        if new is None:
            out.masked_fill_(m, 0)
        else:
            torch.where(m, new.to(out.dtype), out, out=out)

    def reset(self, mask: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor) -> None:
        given = {"qpos": qpos, "qvel": qvel}  # every other state field (warm start, controls, time) starts at zero
        for name, view in self._state.items():
            self._where(mask, given.get(name), view)

    def set_velocity(self, mask: torch.Tensor, qvel: torch.Tensor) -> None:
        self._where(mask, qvel, self._state["qvel"])

    def set_model_fields(self, mask: torch.Tensor, values: dict[str, torch.Tensor]) -> None:
        for name, v in values.items():
            self._where(mask, v, self._fields[name])

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {name: v.detach().cpu().clone() for name, v in {**self._state, **self._fields}.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for name, v in {**self._state, **self._fields}.items():
            v.copy_(state[name].to(v.device, v.dtype))


def create(r: PhysicsRequest) -> WarpPhysics:
    """The registry's constructor (``envs/physics/registry.py``)."""
    return WarpPhysics(r.model, r.num_envs, r.nsubsteps, r.model_fields, device=r.device, nconmax=r.nconmax,
                       njmax=r.njmax)
