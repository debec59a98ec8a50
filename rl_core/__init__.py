"""rl_core: on-device PPO for batched environments (PyTorch only; knows nothing about MuJoCo or JAX)."""

__version__ = "0.1.0"
