"""Sim-to-sim check: an exported locomotion policy in one plain MuJoCo simulation, like a robot would run it.

Everything comes from the ONNX file's metadata: the compiled scene that was trained (``scene_mjb``: MJB bytes,
collision meshes included, so no robot file is needed; since format 2.4 without what only drawing uses), the
observation layout and scales, the joints by name, default joint positions, action scale and clip, control period,
command ranges and the contact sensors that end an episode. No torch, no batching, no observation noise, no
domain randomization, no pushes: the nominal robot. A policy that tracks well in training but not here depends
on something only the training simulator does.

Each episode starts standing at the default pose with a random heading; commands are drawn from the training
ranges and redrawn every ``command_resample_s``; an episode ends on a forbidden contact, non-finite physics
or the time limit. The metrics match ``play.py``'s: the tracking errors are averaged over each episode's
steps, then over episodes, and also per command range; ``success`` is the share of episodes whose base got
``success_distance`` from its start (counted until a fall ends the episode).

A policy of a generated terrain (metadata ``terrain``) walks on the same terrain: the stored scene's
heightfield (``deploy/terrain.py``), with the height scan built from it (metadata ``height_scan``). Its
episodes start on a random tile's centre, ``base_height`` above the ground there, and end as a time-out near
the terrain's edge. With a ``TerrainEval`` (play.py ``--terrain TYPE --level L``) they start on the tiles of
that type at that level, in turn, with play.py's evaluation commands (straight ahead, no turning).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from contract import breakdown, terms
from contract.errors import UserError
from contract.families import Family
from deploy.onnx_policy import OnnxPolicy
from deploy.plain_mujoco import PlainMujoco
from deploy.plain_mujoco import load_scene as load_scene  # where deploy/ and the tests have imported it from
from deploy.terrain import HeightMap, HeightScan, TerrainEval, tiles, yaw_of

COMMANDS = ("lin_vel_x", "lin_vel_y", "yaw_rate")
RUNTIME = "plain MuJoCo"
"""Where ``run`` plays a file (``apps/sim2sim.py`` names it)."""
FAMILY = Family(
    "locomotion", "a legged robot following velocity commands",
    carries=(
        "robot", "scene_mjb", "base_joint", "foot_names", "obs_layout", "obs_scales", "joint_names",
        "default_joint_pos", "joint_pos_limits", "action_scale", "held_joint_names", "held_joint_pos", "held_kp",
        "held_kd", "held_torque_limits", "velocity_limits", "action_clip", "kp", "kd", "torque_limits", "control_dt",
        "sim_dt", "decimation", "base_height", "episode_length_s", "command_ranges", "command_resample_s",
        "command_min_lin_vel", "collisions", "termination_contact_sensors", "contact_force_threshold",
        "success_distance", "height_scan", "terrain",
    ),
)
"""This module plays the family's exported files (``contract/families.py`` reads the declaration)."""


class PlainMujocoRobot(PlainMujoco):
    """A legged robot: held joints at their pose, a height scan on generated terrain, the contacts that end an
    episode."""

    def __init__(self, meta: dict[str, Any]):
        if "base_joint" not in meta:
            raise UserError("sim2sim: this locomotion policy file has a scene but no base_joint (sim2sim runs legged "
                            "robots on a free base)")
        super().__init__(meta)
        self.forbidden = np.array([_force_adr(self.model, n) for n in meta["termination_contact_sensors"]], dtype=int)
        self.ground = HeightMap(self.model)
        if "height_scan" in self.names and "height_scan" not in meta:
            raise UserError("sim2sim: the observation has a height_scan but the metadata no height_scan grid; "
                            "re-export it with play.py --checkpoint RUN --export-onnx")
        # the heights themselves: the term's offset and clip are the contract's (contract/terms.py)
        self.scan = (HeightScan({**meta["height_scan"], "offset": 0.0, "clip": 1e9}, self.ground)
                     if "height_scan" in self.names else None)
        self.constants = terms.Constants.of(meta)
        held = [self.model.joint(name) for name in meta.get("held_joint_names", [])]
        self.held_qpos_adr = np.array([j.qposadr[0] for j in held], dtype=int)
        self.held_actuators = np.array([self.actuator_of[j.id] for j in held], dtype=int)
        self.held_pos = np.array(meta.get("held_joint_pos", []), dtype=np.float64)
        for name in self.names:
            if name not in terms.FROM_READING:
                known = name in terms.TERMS
                raise UserError(f"sim2sim: observation term '{name}' is {'not built here' if known else 'not known'}; "
                                f"sim2sim builds {', '.join(terms.FROM_READING)}")

    def reset(self, yaw: float, start: tuple[float, float] = (0.0, 0.0)) -> None:
        """Standing at the default pose at ``start`` (x, y), ``base_height`` above the ground there, facing ``yaw``."""
        mujoco.mj_resetData(self.model, self.data)
        b = self.base_q
        ground = float(self.ground.height(np.array(start)))
        self.data.qpos[b:b + 3] = [start[0], start[1], ground + self.meta["base_height"]]
        self.data.qpos[b + 3:b + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        self.data.qpos[self.qpos_adr] = self.default
        self.data.qpos[self.held_qpos_adr] = self.held_pos
        self.data.ctrl[self.held_actuators] = self.held_pos
        mujoco.mj_forward(self.model, self.data)
        self.last_action[:] = 0.0

    def heights(self) -> np.ndarray | None:
        b = self.base_q
        return None if self.scan is None else self.scan(self.data.qpos[b:b + 3], yaw_of(self.data.qpos[b + 3:b + 7]))

    def values(self) -> dict[str, np.ndarray]:
        """Each observation term's raw value, built by the contract (``contract/terms.py``) as on a robot."""
        return terms.values(self.names, self.reading(), self.constants, "sim2sim")

    def base_xy(self) -> np.ndarray:
        return self.data.qpos[self.base_q:self.base_q + 2].copy()

    def fell(self) -> bool:
        if not self.finite():
            return True
        return bool((self.data.sensordata[self.forbidden] > self.meta["contact_force_threshold"]).any())


def _force_adr(model: mujoco.MjModel, sensor: str) -> int:
    """sensordata address of a contact force: a touch sensor's value, a contact sensor's normal force."""
    s = model.sensor(sensor)
    return int(model.sensor_adr[s.id]) + (1 if s.type[0] == mujoco.mjtSensor.mjSENS_CONTACT else 0)


def _sample_commands(rng: np.random.Generator, ranges: dict[str, Any], min_lin_vel: float) -> np.ndarray:
    cmd = np.array([rng.uniform(*ranges[name]) for name in COMMANDS])
    if np.linalg.norm(cmd[:2]) < min_lin_vel:
        cmd[:2] = 0.0
    return cmd


def run(policy: OnnxPolicy, episodes: int, seed: int, terrain_eval: TerrainEval | None = None) -> dict[str, Any]:
    """Evaluate ``policy`` for ``episodes`` episodes in plain MuJoCo; returns play.py's locomotion metrics
    (``terrain_eval``: on one tile type at one level, see the module docstring)."""
    meta = policy.metadata
    robot = PlainMujocoRobot(meta)
    starts = tiles(meta, terrain_eval)
    rng = np.random.default_rng(seed)
    dt = meta["control_dt"]
    if terrain_eval is None:
        ranges, min_lin_vel, episode_s = meta["command_ranges"], meta["command_min_lin_vel"], meta["episode_length_s"]
        resample = max(1, round(meta["command_resample_s"] / dt))
    else:
        ranges = {"lin_vel_x": list(terrain_eval.lin_vel_x), "lin_vel_y": [0.0, 0.0], "yaw_rate": [0.0, 0.0]}
        min_lin_vel, episode_s = 0.0, terrain_eval.episode_length_s
        resample = 0  # one command per episode
    max_steps = int(np.ceil(episode_s / dt))
    success_distance = meta.get("success_distance")
    edges = {name: breakdown.edges(*ranges[name]) for name in COMMANDS}
    counts = {k: np.zeros(len(e) - 1) for k, e in edges.items()}
    sums = {k: {m: np.zeros(len(e) - 1) for m in ("lin_vel_tracking_error", "yaw_rate_tracking_error")}
            for k, e in edges.items()}
    lengths, falls, lin_means, yaw_means, successes = [], [], [], [], []
    for k in range(episodes):
        yaw = rng.uniform(-np.pi, np.pi)
        if len(starts) == 1:  # a plane: no draw, so flat policies see the same episodes as before
            start = starts[0]
        else:
            start = starts[k % len(starts)] if terrain_eval is not None else starts[int(rng.integers(len(starts)))]
        robot.reset(yaw, start)
        policy.reset()  # a recurrent policy starts every episode from the zero state
        robot.commands = _sample_commands(rng, ranges, min_lin_vel)
        lin_sum = yaw_sum = travelled = 0.0
        fell, outside, t = False, False, 0
        while t < max_steps and not fell and not outside:
            robot.act(policy(robot.observe())[0])
            t += 1
            xy = robot.base_xy()
            travelled = max(travelled, float(np.hypot(xy[0] - start[0], xy[1] - start[1])))
            outside = robot.ground.outside(xy)
            lin, ang, _ = robot.body_frame()
            errs = {"lin_vel_tracking_error": float(np.linalg.norm(robot.commands[:2] - lin[:2])),
                    "yaw_rate_tracking_error": float(abs(robot.commands[2] - ang[2]))}
            lin_sum += errs["lin_vel_tracking_error"]
            yaw_sum += errs["yaw_rate_tracking_error"]
            for j, key in enumerate(COMMANDS):
                b = breakdown.bin_of(robot.commands[j], edges[key])
                counts[key][b] += 1
                for m, e in errs.items():
                    sums[key][m][b] += e
            fell = robot.fell()
            if resample and t % resample == 0 and not fell:
                robot.commands = _sample_commands(rng, ranges, min_lin_vel)
        lengths.append(t)
        falls.append(float(fell))
        lin_means.append(lin_sum / t)
        yaw_means.append(yaw_sum / t)
        if success_distance is not None:
            successes.append(float(travelled >= success_distance))
    out: dict[str, Any] = {
        "episodes": episodes, "mean_episode_length": float(np.mean(lengths)), "fall_rate": float(np.mean(falls)),
        "lin_vel_tracking_error": float(np.mean(lin_means)), "yaw_rate_tracking_error": float(np.mean(yaw_means))}
    if successes:
        out["success"] = float(np.mean(successes))
    out["by_command"] = {k: breakdown.rows(edges[k], counts[k].tolist(), {m: s.tolist() for m, s in sums[k].items()})
                         for k in edges}
    return out

