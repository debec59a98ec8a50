"""Native MuJoCo (C) backend: mujoco 4.0's ``mujoco.batch.Batch`` steps all simulations on a C thread pool.

``Batch.bind`` gives live numpy views of each simulation's state rows; ``torch.from_numpy`` turns them into
tensors without a copy. Results are bit-identical for any thread count, so CPU runs are reproducible.
"""

from __future__ import annotations

import mujoco
import mujoco.batch
import numpy as np
import torch

from envs.physics.base import STATE_FIELDS, PhysicsReadout, PhysicsRequest

_BAD_STATE_WARNINGS = [int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQVEL),
                       int(mujoco.mjtWarning.mjWARN_BADQACC)]
"""MuJoCo's warnings for a state it rejected and reset."""


class NativePhysics:
    """``num_envs`` copies of ``model`` on ``nthread`` C threads (0: all cores), ``nsubsteps`` mj_steps per ``step``."""

    def __init__(self, model: mujoco.MjModel, num_envs: int, nsubsteps: int, model_fields: tuple[str, ...] = (),
                 nthread: int = 0):
        self.num_envs = num_envs
        self.device = torch.device("cpu")
        self.nsubsteps = nsubsteps
        self.batch = mujoco.batch.Batch(model, nsim=num_envs, nthread=nthread)
        self._state = {name: self.batch.bind(name) for name in STATE_FIELDS}
        self._sensordata = self.batch.bind("sensordata")
        self._actuator_force = self.batch.bind("actuator_force")
        self._fields = {name: self.batch.expand(name) for name in model_fields}
        self._unstable = np.zeros(num_envs, dtype=bool)

    def _bad_state_count(self) -> np.ndarray:
        """Per simulation: how often MuJoCo found a bad qpos / qvel / qacc and reset it (its warning counters)."""
        return self.batch.warning[:, _BAD_STATE_WARNINGS, 1].sum(axis=1)

    def step(self, ctrl: torch.Tensor) -> None:
        self._state["ctrl"][:] = ctrl.detach().cpu().numpy()
        before = self._bad_state_count()
        self.batch.step(nstep=self.nsubsteps)
        self._unstable = self._bad_state_count() > before

    def read(self) -> PhysicsReadout:
        def t(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(a.astype(np.float32))

        return PhysicsReadout(t(self._state["qpos"]), t(self._state["qvel"]), t(self._sensordata),
                              t(self._actuator_force), torch.from_numpy(self._unstable))

    def reset(self, mask: torch.Tensor, qpos: torch.Tensor, qvel: torch.Tensor) -> None:
        ids = mask.cpu().numpy().nonzero()[0]
        if ids.size == 0:
            return
        self.batch.reset(ids=ids, stage=mujoco.mjtStage.mjSTAGE_NONE)
        self._state["qpos"][ids] = qpos.cpu().numpy()[ids]
        self._state["qvel"][ids] = qvel.cpu().numpy()[ids]

    def set_velocity(self, mask: torch.Tensor, qvel: torch.Tensor) -> None:
        ids = mask.cpu().numpy().nonzero()[0]
        self._state["qvel"][ids] = qvel.cpu().numpy()[ids]

    def set_model_fields(self, mask: torch.Tensor, values: dict[str, torch.Tensor]) -> None:
        ids = mask.cpu().numpy().nonzero()[0]
        for name, v in values.items():
            self._fields[name][ids] = v.cpu().numpy()[ids]

    def state_dict(self) -> dict[str, torch.Tensor]:
        arrays = {**self._state, **self._fields}
        return {name: torch.from_numpy(np.array(a)) for name, a in arrays.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for name, a in {**self._state, **self._fields}.items():
            a[:] = state[name].numpy()


def create(r: PhysicsRequest) -> NativePhysics:
    """The registry's constructor (``envs/physics/registry.py``)."""
    return NativePhysics(r.model, r.num_envs, r.nsubsteps, r.model_fields, nthread=r.threads)
