"""The simulation behind the web viewer: an evaluation batch driven by a checkpoint's policy, with live commands.

No viser here: the page (``apps/web/app.py``) calls these methods from its loop only, never from its callbacks
(which run on other threads). The env and policy come from ``play.py``'s own construction, passed in as
functions (``envs`` does not import ``play.py`` nor ``configs``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from contract.errors import UserError
from envs.tasks.locomotion.config import LocomotionEnvConfig

_NAME = re.compile(r"model_(\d+)\.pt$")
TORCH_THREADS = 1
"""Torch threads of the viewer's process: a batch of a few robots gains nothing from more, and on a busy machine
they wait on each other (16 quadruped-rough robots at load 10: 51 ms a step with 2 threads, 10 ms with 1;
``tools/experiments/web_viewer_bench.py --step-cost``)."""
PUSH_SPEED = 1.0
"""Speed (m/s) of the push button's kick to the followed robot's base, in a random horizontal direction."""


def checkpoints(folder: Path) -> list[Path]:
    """The ``model_<iteration>.pt`` files of a run folder (or its ``checkpoints/``), oldest first."""
    folder = folder / "checkpoints" if (folder / "checkpoints").is_dir() else folder
    found = [(int(m.group(1)), p) for p in folder.glob("model_*.pt") if (m := _NAME.search(p.name))]
    return [p for _, p in sorted(found)]


@dataclass(frozen=True)
class Tick:
    """One control step of the followed robot, for the page's numbers and plots."""

    t: float
    """Simulated time since the start (s)."""
    command: tuple[float, float, float]
    """Commanded vx, vy (m/s, body frame) and yaw rate (rad/s)."""
    measured: tuple[float, float, float]
    """Measured vx, vy, yaw rate."""
    lin_vel_error: float
    yaw_rate_error: float
    rewards: dict[str, float]
    """Each reward term's value this step, averaged over the batch (weighted, per step)."""
    done: bool


class Session:
    """``num_envs`` robots of ``env_cfg`` run by the policy of a checkpoint."""

    def __init__(self, run: Any, env_cfg: LocomotionEnvConfig, make_env: Callable[[LocomotionEnvConfig], Any],
                 make_policy: Callable[[Any, Any], Any], load: Callable[[Path], Any], seed: int):
        self.run, self.base_cfg, self.seed = run, env_cfg, seed
        torch.set_num_threads(TORCH_THREADS)
        self._make_env, self._make_policy, self._load = make_env, make_policy, load
        self.terrain: tuple[str, int] | None = None
        self.followed = 0
        self.t = 0.0
        self.held: tuple[float, float, float, float] | None = None
        """(vx, vy, yaw rate, heading) the robots track, or None for the env's random commands."""
        self.env: Any = None
        self._build(env_cfg)

    # ------------------------------------------------------------------------------------ building
    def _build(self, cfg: LocomotionEnvConfig) -> None:
        old = self.env
        self.env = self._make_env(cfg)
        if old is not None:
            old.close()
        self.cfg = cfg
        self.policy = self._make_policy(self.run, self.env)
        self.reset()

    @property
    def num_envs(self) -> int:
        return int(self.env.num_envs)

    @property
    def heading(self) -> bool:
        """Whether the task steers to a heading (the yaw-rate command follows from it)."""
        return bool(self.cfg.commands.heading)

    def step_terms(self) -> list[str]:
        """The task's reward terms (those with a weight), in the order of the env's log."""
        return list(self.env.reward_terms)

    def set_terrain(self, tile_type: str | None, level: int) -> None:
        """Put every robot on ``tile_type`` tiles at ``level`` (a new batch), or back on the run's ground (None)."""
        cfg = self.base_cfg if tile_type is None else self.base_cfg.on_terrain(tile_type, level)
        self.terrain = None if tile_type is None else (tile_type, level)
        self._build(cfg)

    def load(self, path: Path) -> str:
        """Switch to the policy of checkpoint ``path`` (the robots keep walking); raises a one-line UserError."""
        run = self._load(path)
        policy = self._make_policy(run, self.env)
        self.run, self.policy = run, policy
        self.state = policy.init_actor_hidden(self.num_envs) if policy.is_recurrent else None
        return self.describe()

    def describe(self) -> str:
        return f"{Path(self.run.path).name} (iteration {self.run.data['iteration']})"

    # ------------------------------------------------------------------------------------ controls
    def reset(self) -> None:
        """Every robot back to a start pose (recurrent policy state cleared)."""
        self.obs = self.env.reset(seed=self.seed)
        self.state = self.policy.init_actor_hidden(self.num_envs) if self.policy.is_recurrent else None
        self.t = 0.0
        self._apply_hold()

    def hold(self, command: tuple[float, float, float, float] | None) -> None:
        """Every robot tracks (vx, vy, yaw rate, heading) from the next step on; None: random commands."""
        self.held = command
        self._apply_hold()

    def _apply_hold(self) -> None:
        if self.held is None:
            self.env.hold_commands(None)
            return
        vx, vy, yaw, heading = self.held
        n = self.num_envs
        self.env.hold_commands(torch.tensor([[vx, vy, yaw]]).expand(n, 3), torch.full((n,), heading))

    def push(self) -> None:
        """Kick the followed robot's base sideways or forward at ``PUSH_SPEED`` in a random direction."""
        env = self.env
        qvel = env.physics.read().qvel.clone()
        angle = float(np.random.uniform(-np.pi, np.pi))
        v = env.robot.base_dof_adr
        qvel[self.followed, v] += PUSH_SPEED * np.cos(angle)
        qvel[self.followed, v + 1] += PUSH_SPEED * np.sin(angle)
        mask = torch.zeros(self.num_envs, dtype=torch.bool)
        mask[self.followed] = True
        env.physics.set_velocity(mask, qvel)

    # ------------------------------------------------------------------------------------ stepping
    @torch.inference_mode()
    def step(self) -> Tick:
        """One control step of every robot."""
        obs = self.obs["policy"]
        if self.state is not None:
            actions, self.state = self.policy.act_inference_step(obs, self.state)
        else:
            actions = self.policy.act_inference(obs)
        self.obs, _, term, trunc, info = self.env.step(actions)
        done = term | trunc
        if self.state is not None:  # the next observation of a finished env starts a new episode
            self.state.masked_fill_(done.view(1, 1, -1, 1), 0.0)
        self.t += float(self.env.dt)
        i = self.followed
        k = self.env.kinematics(self.env.physics.read())
        measured = torch.cat([k["lin_vel_b"][i, :2], k["ang_vel_b"][i, 2:]]).tolist()
        metrics = info.get("metrics", {})
        rewards = {name.removeprefix("rew_"): float(v) for name, v in info.get("log", {}).items()
                   if name.startswith("rew_")}
        return Tick(self.t, tuple(self.env.commands[i].tolist()), tuple(measured),
                    float(metrics["lin_vel_tracking_error"][i]), float(metrics["yaw_rate_tracking_error"][i]),
                    rewards, bool(done[i]))

    def qpos(self) -> np.ndarray:
        """Every robot's generalized position ``[N, nq]`` (float64, for the scene)."""
        return self.env.physics.read().qpos.double().cpu().numpy()

    def base_position(self) -> np.ndarray:
        """The followed robot's base position (world, m)."""
        a = self.env.robot.base_qpos_adr
        return self.env.physics.read().qpos[self.followed, a:a + 3].double().cpu().numpy()


def with_envs(env_cfg: LocomotionEnvConfig, num_envs: int) -> LocomotionEnvConfig:
    """The evaluation config of ``num_envs`` robots."""
    return dataclasses.replace(env_cfg, num_envs=num_envs).for_evaluation()


def check_web_task(env_cfg: Any, task: str) -> None:
    """One line for a task the viewer cannot show (Gymnasium tasks have no MuJoCo robot batch here)."""
    if not isinstance(env_cfg, LocomotionEnvConfig):
        raise UserError(f"--web is for the MuJoCo locomotion tasks; use --video for the Gymnasium task {task}")
