"""The config every batched MuJoCo task shares: the batch and the physics backend (``envs/tasks/base.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from envs.physics.registry import BACKEND_CHOICES
from rl_core.config import EnvConfig
from rl_core.config_io import require


@dataclass(frozen=True)
class MujocoEnvConfig(EnvConfig):
    """What every batched MuJoCo task configures alike: the batch, the physics backend, episodes and actions."""

    num_envs: int = 2048
    """Number of robots simulated in lock-step."""
    backend: str = "auto"
    """Physics (``envs/physics/registry.py``): native (MuJoCo C on a thread pool, the CPU default), warp (MuJoCo
    Warp driven from torch, the GPU default when installed), mjx (MJX/JAX); auto picks by runner.device and what
    is installed."""
    mjx_impl: Literal["jax", "warp"] = "jax"
    """MJX implementation (backend mjx only): jax (XLA) or warp (MuJoCo Warp, NVIDIA GPUs, needs warp-lang)."""
    warp_nconmax: Optional[int] = None
    """backend warp: contacts per world that its buffers hold (null: mujoco_warp's estimate for the model). A
    world that overflows it in a step is reset and that transition not learned from (Env/diverged)."""
    warp_njmax: Optional[int] = None
    """backend warp: constraint rows per world (null: mujoco_warp's estimate); overflow handled as above."""
    cuda_graph: bool = True
    """backend warp on a GPU: replay the task logic of a step (observations, rewards, resets: a few hundred
    small torch ops) as one CUDA graph after the physics' own graph (false: the task logic runs op by op)."""
    physics_threads: int = 0
    """Threads of the native backend (0: all cores)."""
    decimation: int = 4
    """Physics substeps per control step (0.005 s timestep: 50 Hz control)."""
    episode_length_s: float = 20.0
    """Time-out of an episode (truncated, bootstrapped)."""
    randomize_initial_episode_length: bool = True
    """Start the run with random episode clocks so that time-outs do not synchronize across envs."""
    clip_actions: float = 100.0
    """Actions are clipped to [-clip_actions, clip_actions] before they become joint targets."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.backend in BACKEND_CHOICES, "env.backend", self.backend, "one of " + ", ".join(BACKEND_CHOICES))
        require(self.physics_threads >= 0, "env.physics_threads", self.physics_threads, "an integer >= 0")
        require(self.decimation >= 1, "env.decimation", self.decimation, "an integer >= 1")
        require(self.episode_length_s > 0, "env.episode_length_s", self.episode_length_s, "a number > 0")
        require(self.clip_actions > 0, "env.clip_actions", self.clip_actions, "a number > 0")
        for name in ("warp_nconmax", "warp_njmax"):
            value = getattr(self, name)
            require(value is None or value >= 1, f"env.{name}", value, "null or an integer >= 1")
