"""The velocity-tracking task's observation table (plain data: sim2sim and the config read it without torch).

Each row (``envs/tasks/obs_table.py``): the term's name, width, scale, noise level and clip (dotted paths into
``LocomotionEnvConfig``), mirror rule. The values and bounds of each term: ``observations.py``.
"""

from __future__ import annotations

from envs.tasks.obs_table import ObsTerm, declared

OBS_SCALES = {"lin_vel": 2.0, "ang_vel": 0.25, "joint_pos": 1.0, "joint_vel": 0.05, "height_scan": 5.0}
"""Observation scales (legged_gym); the commands use the matching lin_vel / ang_vel scales. They keep every term
near [-1, 1] for policies without an observation normalizer (``policy.normalize_obs=false``, legged_gym's way)."""

_S = OBS_SCALES
TABLE = declared((
    ObsTerm("base_lin_vel", 3, _S["lin_vel"], "noise.lin_vel", mirror="vector"),
    ObsTerm("base_ang_vel", 3, _S["ang_vel"], "noise.ang_vel", mirror="axial"),
    ObsTerm("projected_gravity", 3, 1.0, "noise.gravity", mirror="vector"),
    ObsTerm("commands", 3, (_S["lin_vel"], _S["lin_vel"], _S["ang_vel"]), mirror="command"),
    ObsTerm("joint_pos", "joints", _S["joint_pos"], "noise.joint_pos", mirror="joints"),
    ObsTerm("joint_vel", "joints", _S["joint_vel"], "noise.joint_vel", mirror="joints"),
    ObsTerm("last_actions", "joints", 1.0, mirror="joints"),
    ObsTerm("height_scan", "scan", _S["height_scan"], "height_scan.noise", clip="height_scan.clip", mirror="none"),
))
"""The policy's observation terms in order (``height_scan`` only when ``env.height_scan.enabled``)."""
TERM_NAMES = tuple(t.name for t in TABLE)
"""The terms' names in order."""
