"""Checkpoints: atomic writes, ``weights_only`` loads, a format version, one-line errors."""

from __future__ import annotations

import os
import pickle
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import torch

from rl_core.errors import CheckpointError

FORMAT_VERSION = 1
_NAME = re.compile(r"model_(\d+)\.pt$")


def save_atomic(obj: dict[str, Any], path: str | Path) -> Path:
    """Write to a temporary file in the same folder, fsync, then rename: a crash leaves the old file or the new."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def resolve_path(path: str | Path) -> Path:
    """A checkpoint file, or a run folder / checkpoints folder (then its newest ``model_<it>.pt``)."""
    path = Path(path)
    if path.is_dir():
        folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
        found = sorted((int(m.group(1)), p) for p in folder.glob("model_*.pt") if (m := _NAME.search(p.name)))
        if not found:
            raise CheckpointError(f"checkpoint error: no model_<iteration>.pt in {folder}")
        return found[-1][1]
    if not path.exists():
        raise CheckpointError(f"checkpoint error: {path} does not exist")
    return path


def load(path: str | Path) -> dict[str, Any]:
    """Load with ``weights_only=True`` (no code in the file runs); any failure is one clear line."""
    path = resolve_path(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "unsupported content"
        raise CheckpointError(f"checkpoint error: {path} was refused by the safe loader (weights_only): {first}") from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint error: {path} is corrupt or not a checkpoint ({type(e).__name__})") from None
    if not isinstance(data, dict) or "format_version" not in data:
        raise CheckpointError(f"checkpoint error: {path} is not a legged-mjx checkpoint (no format_version)")
    if data["format_version"] > FORMAT_VERSION:
        raise CheckpointError(f"checkpoint error: {path} has format_version {data['format_version']}, newer than this "
                              f"version supports ({FORMAT_VERSION}); upgrade legged-mjx")
    return data


def check_task(data: dict[str, Any], task: str, source: str) -> None:
    """One clear line if the checkpoint belongs to another task (check it before building anything from its config)."""
    if data.get("task") != task:
        raise CheckpointError(f"checkpoint error: {source} was trained on task '{data.get('task')}', not '{task}'")


def read_config(data: dict[str, Any], default: Any, source: str) -> Any:
    """The checkpoint's config laid over the task's ``default`` config; one clear line if it cannot be read."""
    from rl_core.config_io import from_dict
    from rl_core.errors import UserError

    try:
        return from_dict(default, data["config"])
    except UserError as e:
        raise CheckpointError(f"checkpoint error: {source} holds a config this version cannot read ({e})") from None


def check_compatible(data: dict[str, Any], task: str, env: Any, source: str) -> None:
    """One clear line if the checkpoint belongs to another task or observation / action layout than ``env``."""
    check_task(data, task, source)
    if dict(data.get("obs_dims", {})) != dict(env.obs_dims):
        raise CheckpointError(f"checkpoint error: {source} has observation sizes {data.get('obs_dims')}, "
                              f"this env has {dict(env.obs_dims)}")
    spec = {"discrete": env.action_spec.discrete, "n": env.action_spec.n}
    if data.get("action_spec") != spec:
        raise CheckpointError(f"checkpoint error: {source} has action space {data.get('action_spec')}, this env has {spec}")
