"""The interface every batched physics backend offers to the task logic.

The task logic is torch code over these tensors, so one task definition runs on every backend. All tensors
are ``[num_envs, ...]`` on ``device``. Per-environment resets and model parameters are given as a boolean
mask over all envs plus full-size values (rows outside the mask are ignored): fixed shapes, so a compiled
backend never recompiles and no index list has to leave the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import mujoco
import torch

STATE_FIELDS = ("qpos", "qvel", "qacc_warmstart", "ctrl", "time")
"""The physics state saved in checkpoints: with it a simulation continues exactly as it would have."""


@dataclass(frozen=True)
class PhysicsReadout:
    """What the task reads after a step (float32). Derived fields are those of the last substep, as after mj_step."""

    qpos: torch.Tensor
    """Generalized positions ``[N, nq]`` (free joint: position, quaternion wxyz; then the hinge joints)."""
    qvel: torch.Tensor
    """Generalized velocities ``[N, nv]`` (free joint: world linear velocity, body-frame angular velocity)."""
    sensordata: torch.Tensor
    """All sensor values ``[N, nsensordata]`` in the model's sensor order."""
    actuator_force: torch.Tensor
    """Actuator forces (joint torques) ``[N, nu]``."""
    unstable: torch.Tensor | None = None
    """``[N]`` bool: the last step of that simulation went wrong in a way only the backend sees (MuJoCo C met a
    bad state and reset it itself, with a warning; MuJoCo Warp overflowed its contact or constraint buffers, or
    reported a contact of impossible depth);
    the task resets it. None where the backend has no such signal (MJX)."""


@dataclass(frozen=True, kw_only=True)
class PhysicsRequest:
    """What ``envs/physics/factory.make_physics`` hands a backend's constructor; each backend reads the fields
    it uses. Built by keywords only (nine fields, four of them ints)."""

    model: mujoco.MjModel
    """The compiled scene every simulation runs."""
    num_envs: int
    """Number of simulations stepped together."""
    nsubsteps: int
    """Physics steps per ``step`` call (the task's decimation)."""
    model_fields: tuple[str, ...]
    """MjModel fields each simulation gets its own copy of (written by ``set_model_fields``)."""
    device: torch.device
    """The env's device (a backend that only runs on the CPU ignores it)."""
    threads: int = 0
    """native: C threads (0: all cores)."""
    mjx_impl: str = "jax"
    """mjx: MJX implementation, ``jax`` or ``warp``."""
    nconmax: int | None = None
    """warp: contacts per world its buffers hold (None: mujoco_warp's estimate)."""
    njmax: int | None = None
    """warp: constraint rows per world (None: mujoco_warp's estimate)."""


class Physics(Protocol):
    num_envs: int
    """Number of simulations stepped together."""
    device: torch.device
    """Where the readout lives and where masks and values are expected."""

    def step(self, ctrl: torch.Tensor) -> None:
        """Set the controls ``[N, nu]`` and advance every simulation by the backend's substeps."""
        ...

    def read(self) -> PhysicsReadout:
        """The current state and the derived fields of the last substep; later steps do not change these tensors."""
        ...

    def reset(self, mask: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor) -> None:
        """Restart the masked simulations (time, warm start and controls zeroed) at ``qpos`` / ``qvel``."""
        ...

    def set_velocity(self, mask: torch.Tensor, qvel: torch.Tensor) -> None:
        """Overwrite the velocities of the masked simulations (a push); nothing else changes."""
        ...

    def set_model_fields(self, mask: torch.Tensor, values: dict[str, torch.Tensor]) -> None:
        """Write per-simulation model fields (declared at construction) for the masked simulations."""
        ...

    def state_dict(self) -> dict[str, torch.Tensor]:
        """STATE_FIELDS and the per-simulation model fields, as CPU tensors."""
        ...

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore what ``state_dict`` returned."""
        ...
