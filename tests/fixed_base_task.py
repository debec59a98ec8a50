"""A MuJoCo task that is not locomotion, for play.py's tests: a one-joint arm holding its angle at zero, with its own
config class (no floating base, no feet, no commands), exportable with its compiled scene like the locomotion tasks.
A task written without the MuJoCo task base (``envs/tasks/base.py``), as a user might; registered from this file
(``--task tests/fixed_base_task.py:reach``)."""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
import torch

from envs.registry import TaskSpec
from rl_core.config import AlgorithmConfig, EnvConfig, PolicyConfig, RunnerConfig, TrainConfig
from rl_core.env_api import ActionSpec

XML = """<mujoco><worldbody><body name="link"><joint name="shoulder" type="hinge"/>
<geom type="capsule" size="0.05 0.2"/></body></worldbody><actuator><position joint="shoulder" kp="10"/></actuator>
</mujoco>"""
STEPS = 10
"""Episode length (control steps)."""


@dataclass(frozen=True)
class ReachEnvConfig(EnvConfig):
    """The arm's env config: no render_mode, no terrain, no commands."""

    backend: str = "native"
    """Physics backend (the field a MuJoCo task has; this stand-in integrates by hand)."""


class ReachEnv:
    """``num_envs`` joint angles driven towards zero; truncated after ``STEPS`` steps."""

    def __init__(self, cfg: ReachEnvConfig, device: torch.device):
        self.cfg, self.num_envs, self.device = cfg, cfg.num_envs, torch.device("cpu")
        self.obs_dims = {"policy": 2}
        self.action_spec = ActionSpec(discrete=False, n=1, low=(-1.0,), high=(1.0,))
        self.model = mujoco.MjModel.from_xml_string(XML)
        self.gen = torch.Generator().manual_seed(0)
        self.angle = torch.zeros(self.num_envs)
        self.t = torch.zeros(self.num_envs)

    def _obs(self) -> dict[str, torch.Tensor]:
        return {"policy": torch.stack([self.angle, self.t / STEPS], -1)}

    def reset(self, seed: int | None = None) -> dict[str, torch.Tensor]:
        if seed is not None:
            self.gen.manual_seed(seed)
        self.angle = torch.rand(self.num_envs, generator=self.gen) - 0.5
        self.t = torch.zeros(self.num_envs)
        return self._obs()

    def step(self, actions: torch.Tensor) -> Any:
        self.angle = self.angle + 0.1 * actions.clamp(-1, 1).squeeze(-1)
        self.t = self.t + 1
        truncated = self.t >= STEPS
        final = {k: v.clone() for k, v in self._obs().items()}
        self.t = torch.where(truncated, torch.zeros_like(self.t), self.t)
        return self._obs(), -self.angle.abs(), torch.zeros_like(truncated), truncated, {"final_obs": final, "log": {}}

    def export_metadata(self) -> dict[str, Any]:
        buffer = np.zeros(mujoco.mj_sizeModel(self.model), dtype=np.uint8)
        mujoco.mj_saveModel(self.model, None, buffer)
        return {"robot": "arm", "scene_mjb": base64.b64encode(zlib.compress(buffer.tobytes())).decode("ascii"),
                "joint_names": ["shoulder"]}

    def close(self) -> None:
        pass


def _config() -> TrainConfig:
    return TrainConfig(env=ReachEnvConfig(num_envs=4),
                       policy=PolicyConfig(actor_hidden_dims=(8,), critic_hidden_dims=(8,)),
                       algorithm=AlgorithmConfig(num_mini_batches=1, num_learning_epochs=1),
                       runner=RunnerConfig(num_steps_per_env=8, max_iterations=1))


reach = TaskSpec("reach", lambda cfg, device: ReachEnv(cfg, device), _config, "a one-joint arm (play.py's tests)")
