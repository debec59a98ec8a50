"""Per-env resets with domain randomization, and random pushes.

A reset puts the robot at its start (the ground's start position, ``spawn_height`` above it, a random heading,
the default pose times a random factor, small random base velocities) and draws the env's friction, added base
mass and gain factor, and where the config asks for them its motor strength (stiffness, damping and torque limit
together), separate stiffness and damping factors and its action delay (``latency.py``); a push overwrites the
base's horizontal velocity. Fixed shapes: every draw is made for all envs and applied to the masked ones. A
randomization that is off draws nothing, so a task's random stream stays what it was without it. With
``hardware_ramp_steps`` the robot-hardware ranges (motor strength, stiffness and damping factors, latency) widen
from none to their full size over the run's first steps, counted on the device (no host sync; a CUDA graph replays
the count).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mujoco
import torch

from envs.physics.base import Physics
from envs.tasks.locomotion.config import RandomizationConfig
from envs.tasks.locomotion.state import LocomotionState
from envs.tasks.locomotion.step import Addresses
from envs.tasks.rotations import from_yaw
from envs.terrain.ground import Ground

WRITES = ("privileged", "action_delay")
"""The task state fields this module writes (``tests/envs/tasks/test_state_writers.py`` checks it)."""

RANDOMIZED_FIELDS = ("geom_friction", "body_mass", "actuator_gainprm", "actuator_biasprm")
"""Model fields that get per-env values (and ``actuator_forcerange`` with ``motor_strength``: ``fields_of``)."""
OFF = (1.0, 1.0)
"""A factor range that changes nothing (no draw)."""


def fields_of(cfg: RandomizationConfig) -> tuple[str, ...]:
    """The model fields a task with ``cfg`` randomizes per env."""
    return RANDOMIZED_FIELDS + (("actuator_forcerange",) if cfg.motor_strength != OFF else ())

Uniform = Callable[[tuple[int, ...], float, float], torch.Tensor]


class Randomizer:
    """Resets and pushes of the masked envs (see the module docstring)."""

    def __init__(self, cfg: RandomizationConfig, model: mujoco.MjModel, adr: Addresses, default_joint_pos: torch.Tensor,
                 held_pos: torch.Tensor, mass_body: int, spawn_height: float, uniform: Uniform):
        device = default_joint_pos.device
        self.cfg, self.adr, self.uniform = cfg, adr, uniform
        self.default_joint_pos, self.held_pos, self.mass_body = default_joint_pos, held_pos, mass_body
        self.spawn_height = spawn_height
        self.nv = model.nv
        self.qpos0 = torch.tensor(model.qpos0, device=device, dtype=torch.float32)
        self.defaults = {name: torch.tensor(getattr(model, name), device=device, dtype=torch.float32)
                         for name in fields_of(cfg)}
        self.steps = torch.zeros((), dtype=torch.long, device=device)
        """Control steps of the run so far (counted only with ``hardware_ramp_steps``; saved with the envs)."""

    def advance(self) -> None:
        """One control step of the batch (the hardware ramp's count)."""
        if self.cfg.hardware_ramp_steps:
            self.steps.add_(1)

    def _share(self) -> torch.Tensor | None:
        """How much of the hardware ranges applies now (0 to 1), or None without a ramp (the full ranges)."""
        ramp = self.cfg.hardware_ramp_steps
        return (self.steps.float() / ramp).clamp(max=1.0) if ramp else None

    def _factor(self, n: int, rng: tuple[float, float], share: torch.Tensor | None) -> torch.Tensor:
        """``[n, 1]`` factors uniform in ``rng``, its ends moved toward 1 by the ramp's ``share``."""
        if share is None:
            return self.uniform((n, 1), *rng)
        low, high = 1.0 + share * (rng[0] - 1.0), 1.0 + share * (rng[1] - 1.0)
        return low + self.uniform((n, 1), 0.0, 1.0) * (high - low)

    def reset(self, physics: Physics, ground: Ground, state: LocomotionState, mask: torch.Tensor) -> None:
        """Restart the masked envs at a randomized start and draw their model parameters."""
        self._restart(physics, ground, mask)
        self._randomize_model(physics, state, mask)

    def _restart(self, physics: Physics, ground: Ground, mask: torch.Tensor) -> None:
        adr, rnd, u = self.adr, self.cfg, self.uniform
        N, J = mask.shape[0], self.default_joint_pos.shape[0]
        qpos = self.qpos0.expand(N, -1).clone()
        qpos[:, adr.base_pos] = ground.start_positions()
        qpos[:, adr.base_pos.start + 2] += self.spawn_height
        qpos[:, adr.base_quat] = from_yaw(u((N,), -math.pi, math.pi))
        qpos[:, adr.joint_qpos] = self.default_joint_pos * u((N, J), *rnd.init_joint_scale)
        if self.held_pos.numel():
            qpos[:, adr.held_qpos] = self.held_pos
        qvel = torch.zeros(N, self.nv, device=qpos.device)
        qvel[:, adr.base_dofs] = u((N, 6), -rnd.init_base_vel, rnd.init_base_vel)
        physics.reset(mask, qpos, qvel)

    def _randomize_model(self, physics: Physics, state: LocomotionState, mask: torch.Tensor) -> None:
        d, rnd, u, N = self.defaults, self.cfg, self.uniform, mask.shape[0]
        friction = d["geom_friction"].expand(N, -1, -1).clone()
        mu = u((N, 1), *rnd.friction)
        friction[:, :, 0] = mu
        mass = d["body_mass"].expand(N, -1).clone()
        added = u((N,), *rnd.added_base_mass)
        mass[:, self.mass_body] += added
        gain = u((N, 1), *rnd.gain_scale)
        drawn = torch.cat([mu, added.unsqueeze(1), gain], dim=1)
        state.privileged = torch.where(mask.unsqueeze(1), drawn, state.privileged)
        kp, kd, strength = self._servo_factors(N, gain)
        gainprm = d["actuator_gainprm"].expand(N, -1, -1).clone()
        gainprm[:, :, 0] *= kp
        biasprm = d["actuator_biasprm"].expand(N, -1, -1).clone()
        biasprm[:, :, 1] *= kp
        biasprm[:, :, 2] *= kd
        fields = {"geom_friction": friction, "body_mass": mass, "actuator_gainprm": gainprm,
                  "actuator_biasprm": biasprm}
        if strength is not None:
            fields["actuator_forcerange"] = d["actuator_forcerange"] * strength.unsqueeze(-1)
        physics.set_model_fields(mask, fields)
        if rnd.action_delay != (0, 0):
            low, high = rnd.action_delay
            share = self._share()
            drawn = (u((N,), low, high + 1) if share is None
                     else low + u((N,), 0.0, 1.0) * (share * (high - low) + 1))  # the ramp: above ``low``
            delay = drawn.floor().long().clamp(low, high)
            state.action_delay = torch.where(mask, delay, state.action_delay)

    def _servo_factors(self, n: int, gain: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Per env ``[n, 1]``: the factor on every servo's stiffness and on its damping (``gain_scale`` times the
        motor strength and the separate kp / kd factors, each drawn only when on), and the motor strength (None:
        off)."""
        rnd, share = self.cfg, self._share()
        strength = self._factor(n, rnd.motor_strength, share) if rnd.motor_strength != OFF else None
        kp = kd = gain if strength is None else gain * strength
        if rnd.kp_scale != OFF:
            kp = kp * self._factor(n, rnd.kp_scale, share)
        if rnd.kd_scale != OFF:
            kd = kd * self._factor(n, rnd.kd_scale, share)
        return kp, kd, strength

    def push(self, physics: Physics, qvel: torch.Tensor, mask: torch.Tensor) -> None:
        """Set the masked envs' horizontal base velocity to a uniform draw (takes effect during the next step)."""
        v, start = self.cfg.push_vel_xy, self.adr.base_linvel.start
        qvel = qvel.clone()
        qvel[:, start:start + 2] = self.uniform((mask.shape[0], 2), -v, v)
        physics.set_velocity(mask, qvel)
