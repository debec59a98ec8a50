"""The velocity-tracking task's observation table (plain data: sim2sim and the config read it without torch).

Each row (``envs/tasks/obs_table.py``) declares one term whole: its name, width, scale, its value from the
observation inputs (``observations.Inputs``: the step's view ``s``, the task state, the sources), its bound in
physical units (``observations.BoundInputs``), its noise level and clip in ``LocomotionEnvConfig``, its mirror
rule. The functions run in the trainer only; this module imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from envs.tasks.obs_table import ObsTerm, declared

if TYPE_CHECKING:
    from envs.tasks.locomotion.config import LocomotionEnvConfig
    from envs.tasks.locomotion.observations import BoundInputs, Inputs

    Row = ObsTerm[Inputs, BoundInputs, LocomotionEnvConfig]
    """A row of this family's table (mypy checks its functions against the inputs, the bound inputs, the config)."""
else:
    Row = ObsTerm  # the types above need torch: the table reads without it

OBS_SCALES = {"lin_vel": 2.0, "ang_vel": 0.25, "joint_pos": 1.0, "joint_vel": 0.05, "height_scan": 5.0}
"""Observation scales (legged_gym); the commands use the matching lin_vel / ang_vel scales. They keep every term
near [-1, 1] for policies without an observation normalizer (``policy.normalize_obs=false``, legged_gym's way)."""

_S = OBS_SCALES
TABLE: tuple[Row, ...] = declared((
    Row("base_lin_vel", 3, _S["lin_vel"], value=lambda x: x.s.lin_vel_b,
        bound=lambda b, n: [b.speed.base_lin_vel] * n, noise=lambda c: c.noise.lin_vel, mirror="vector"),
    Row("base_ang_vel", 3, _S["ang_vel"], value=lambda x: x.s.ang_vel_b,
        bound=lambda b, n: [b.speed.base_ang_vel] * n, noise=lambda c: c.noise.ang_vel, mirror="axial"),
    Row("projected_gravity", 3, 1.0, value=lambda x: x.s.gravity_b,
        bound=lambda b, n: [1.0] * n, noise=lambda c: c.noise.gravity, mirror="vector"),
    Row("commands", 3, (_S["lin_vel"], _S["lin_vel"], _S["ang_vel"]), value=lambda x: x.own(x.state.commands),
        bound=lambda b, n: b.command_ranges(), mirror="command"),
    Row("joint_pos", "joints", _S["joint_pos"], value=lambda x: x.s.joint_pos - x.src.default_joint_pos,
        bound=lambda b, n: b.joint_ranges(), noise=lambda c: c.noise.joint_pos, mirror="joints"),
    Row("joint_vel", "joints", _S["joint_vel"], value=lambda x: x.s.joint_vel,
        bound=lambda b, n: list(b.speed.joint_vel), noise=lambda c: c.noise.joint_vel, mirror="joints"),
    Row("last_actions", "joints", 1.0, value=lambda x: x.own(x.state.last_actions),
        bound=lambda b, n: [b.cfg.clip_actions] * n, mirror="joints"),
    Row("height_scan", "scan", _S["height_scan"], value=lambda x: x.height_scan(),
        bound=lambda b, n: [b.cfg.height_scan.clip] * n, noise=lambda c: c.height_scan.noise,
        clip=lambda c: c.height_scan.clip, mirror="none"),
), bounded=True)
"""The policy's observation terms in order (``height_scan`` only when ``env.height_scan.enabled``)."""
TERM_NAMES = tuple(t.name for t in TABLE)
"""The terms' names in order."""
