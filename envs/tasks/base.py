"""The base of every batched MuJoCo task: physics, random stream, task state, CUDA graphs, checkpoints.

A task family (velocity tracking in ``envs/tasks/locomotion/``, reaching in ``envs/tasks/reach/``) builds its
``mujoco.MjModel``, declares its per-env state (``envs/tasks/state.py``) and hands both to ``MujocoTask``, which
owns what every such task does alike:

- the physics backend picked by ``env.backend`` (``envs/physics/factory.py``), stepped ``decimation`` substeps
  per control step, with the model fields it randomizes per env;
- one torch generator for every random draw (saved in checkpoints: a resumed CPU run continues bit-identically);
- the VecEnv calls ``reset`` / ``step`` (one torch thread for the task logic next to a CPU physics backend, or the
  task logic replayed as a CUDA graph after MuJoCo Warp's own graph: ``envs/tasks/graphed_step.py``);
- ``state_dict`` / ``load_state_dict`` (physics state, task state, generator);
- what play.py's video and viewer read (``model``, ``render_model``, ``camera``, ``track_body``).

The family implements ``_act`` (actions to controls and a physics step), ``_finish_step`` (everything after the
physics, torch only, no host sync) and ``_reset_all``, and may add to the checkpoint (``_extra_state``).
"""

from __future__ import annotations

import base64
import math
import zlib
from typing import Any, Generic, TypeVar

import mujoco
import numpy as np
import torch

from envs.physics.cpu_threads import single_threaded
from envs.physics.factory import make_physics, resolve_backend
from envs.tasks.graphed_step import GraphedStep
from envs.tasks.mujoco_config import MujocoEnvConfig
from envs.tasks.state import TaskState
from rl_core.env_api import Obs, StepInfo

S = TypeVar("S", bound=TaskState)


class MujocoTask(Generic[S]):
    """``cfg.num_envs`` simulations of ``model`` with per-env task state ``state`` (see the module docstring)."""

    camera: str | None = None
    """The camera a video films through (None: the renderer's free camera)."""
    track_body: int = 0
    """The body the interactive viewer's camera follows (0: the world)."""

    def __init__(self, cfg: MujocoEnvConfig, model: mujoco.MjModel, randomized_fields: tuple[str, ...],
                 state: type[S], sizes: dict[str, int], device: torch.device | str):
        device = torch.device(device)
        self.backend = resolve_backend(cfg.backend, device)
        self.model = model
        self.num_envs = cfg.num_envs
        self.physics = make_physics(model, cfg.num_envs, cfg.decimation, randomized_fields, self.backend, device,
                                    cfg.physics_threads, cfg.mjx_impl, cfg.warp_nconmax, cfg.warp_njmax)
        self.device = self.physics.device
        self.dt = cfg.decimation * model.opt.timestep
        """Control period (s)."""
        self.generator = torch.Generator(self.device)
        """Every random draw of the task (saved in checkpoints)."""
        self.state: S = state.allocate(cfg.num_envs, sizes, self.device)
        """Per-env task state (checkpointed, reset by ``state.clear``, static in the CUDA graph)."""
        self._cpu = self.device.type == "cpu"
        self.fixed_shapes = not self._cpu
        """Masked updates run at fixed shapes whatever the mask (no host sync reads it): on a GPU. On the CPU an
        empty mask skips its work and freshly reset envs alone are observed (a test may switch it on there)."""
        self._all = torch.ones(cfg.num_envs, dtype=torch.bool, device=self.device)
        graphable = cfg.cuda_graph and self.backend == "warp" and self.device.type == "cuda"
        self.graphed = self.graphed_step() if graphable else None
        """The step's task logic as a replayed CUDA graph (MuJoCo Warp on a GPU), else None."""

    def graphed_step(self) -> GraphedStep:
        """The step as ``GraphedStep`` wires it: ``_act`` eagerly, ``_finish_step`` captured with the task state as
        its static buffers (tests/test_graphed_step_contract.py runs this wiring on the CPU with a stand-in graph)."""
        return GraphedStep(self.state, self._act, self._finish_step, type(self.state).names(), self.generator)

    # ------------------------------------------------------------------------- what a task family implements
    def _act(self, actions: torch.Tensor) -> torch.Tensor:
        """Turn ``actions`` into controls and advance the physics one control step; returns the applied actions."""
        raise NotImplementedError

    def _finish_step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        """Everything after the physics (torch only, fixed shapes, no host sync)."""
        raise NotImplementedError

    def _reset_all(self) -> Obs:
        """Reset every env; returns the first observations."""
        raise NotImplementedError

    def _extra_state(self) -> dict[str, torch.Tensor]:
        """Task state outside ``state`` that checkpoints keep (CPU tensors)."""
        return {}

    def _load_extra_state(self, task: dict[str, torch.Tensor]) -> None:
        """Restore what ``_extra_state`` saved."""

    # ------------------------------------------------------------------------------------ VecEnv API
    def reset(self, seed: int | None = None) -> Obs:
        with single_threaded(self._cpu):
            if seed is not None:
                self.generator.manual_seed(seed)
            return self._reset_all()

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, torch.Tensor, torch.Tensor, StepInfo]:
        if self.graphed is not None:
            return self.graphed(actions)
        with single_threaded(self._cpu):
            return self._finish_step(self._act(actions))

    def close(self) -> None:
        pass

    def render_model(self, index: int) -> mujoco.MjModel:
        """The model to film env ``index`` with from now on (the simulated one unless a task lightens it)."""
        return self.model

    def caption(self, index: int) -> str:
        """What a video frame of env ``index`` says (a task tells its command and what the robot does)."""
        return ""

    # ----------------------------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict[str, Any]:
        task = self.state.state_dict() | self._extra_state()
        return {"physics": self.physics.state_dict(), "task": task, "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.physics.load_state_dict(state["physics"])
        self.state.load_state_dict(state["task"])
        self._load_extra_state(state["task"])
        self.generator.set_state(state["generator"])

    # ------------------------------------------------------------------------------------ helpers
    def _needed(self, mask: torch.Tensor) -> bool:
        """Whether masked work must run: on the CPU skip an empty mask (reading it is free); on a GPU always run
        the fixed-shape masked update instead of reading the mask back (a host sync)."""
        return self.fixed_shapes or bool(mask.any())

    def _uniform(self, shape: tuple[int, ...], low: float, high: float) -> torch.Tensor:
        """Uniform draws in [low, high) from the task's generator."""
        return torch.rand(shape, generator=self.generator, device=self.device) * (high - low) + low

    def episode_steps(self, seconds: float) -> int:
        """Control steps in ``seconds`` (rounded up)."""
        return math.ceil(seconds / self.dt)


def columns(addresses: tuple[int, ...], device: torch.device) -> slice | torch.Tensor:
    """Index of the given columns: a slice (a view, no copy) when they are contiguous, else an index tensor."""
    if addresses and list(addresses) == list(range(addresses[0], addresses[0] + len(addresses))):
        return slice(addresses[0], addresses[0] + len(addresses))
    return torch.tensor(addresses, dtype=torch.long, device=device)


def scene_bytes(model: mujoco.MjModel) -> str:
    """The compiled model as MJB bytes, zlib-compressed and base64-encoded (meshes and textures included)."""
    buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    return base64.b64encode(zlib.compress(buffer.tobytes(), 9)).decode("ascii")
