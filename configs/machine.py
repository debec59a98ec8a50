"""Which defaults of a task depend on the machine (a GPU present or not), said instead of silently differing."""

from __future__ import annotations

from typing import Any

from envs.registry import TaskSpec
from rl_core.config import TrainConfig
from rl_core.config_io import to_dict


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def machine_dependent(spec: TaskSpec) -> dict[str, tuple[Any, Any]]:
    """field -> (default with a GPU, default without one), for the fields whose default depends on it."""
    if spec.machine_defaults is None:
        return {}
    gpu, cpu = _flat(to_dict(spec.machine_defaults(True))), _flat(to_dict(spec.machine_defaults(False)))
    return {k: (gpu[k], cpu.get(k)) for k in gpu if gpu[k] != cpu.get(k)}


def notes(spec: TaskSpec, cfg: TrainConfig, gpu_present: bool) -> list[str]:
    """One line per machine-dependent default, and env.backend=auto's resolution; empty when nothing depends."""
    lines = [f"{k} = {cpu_v if not gpu_present else gpu_v}  (with a GPU: {gpu_v}; without: {cpu_v})"
             for k, (gpu_v, cpu_v) in machine_dependent(spec).items()]
    if getattr(cfg.env, "backend", None) == "auto":
        lines.append("env.backend = auto  (with a GPU: warp if warp-lang and mujoco-warp are installed, else mjx; "
                     "without: native)")
    if lines:
        lines.insert(0, f"defaults that depend on the machine (this one: {'a GPU' if gpu_present else 'no GPU'}):")
    return lines
