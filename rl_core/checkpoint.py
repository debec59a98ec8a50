"""Checkpoints: atomic writes, ``weights_only`` loads, a format version, a content checksum, one-line errors.

Format 2 stores ``checksum``: a SHA-256 over every value of the checkpoint (tensor bytes, dtypes and shapes
included), so a flipped bit in a weight is caught on load (torch's zip container does not check its CRCs).
Format 1 files (no checksum) still load.

Format 3 (issue 49): the saved config's keys changed, a reward section holds weights only (a locomotion config's
``env.rewards.tracking_sigma`` and ``env.rewards.only_positive`` are ``env.reward_params.*``). Format 1 and 2
files still load: ``read_config`` reads a moved key at its new place (the config's ``MOVED_KEYS``,
``config_io.moved_key``); a checkout of format 2 refuses a format 3 file in one line instead of failing on a key.
"""

from __future__ import annotations

import errno
import hashlib
import os
import pickle
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import torch

from contract.errors import CheckpointError

FORMAT_VERSION = 3
_REQUIRED = ("task", "iteration", "config", "policy", "obs_dims", "action_spec")
"""Entries every checkpoint has; a file without them does not verify."""
_NAME = re.compile(r"model_(\d+)\.pt$")


def checksum(obj: Any) -> str:
    """SHA-256 of a checkpoint's content, independent of how torch laid it out in the file."""
    h = hashlib.sha256()

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            h.update(b"{")
            for k in sorted(x, key=str):
                if k != "checksum":
                    h.update(repr(k).encode())
                    walk(x[k])
            h.update(b"}")
        elif isinstance(x, (list, tuple)):
            h.update(b"[")
            for item in x:
                walk(item)
            h.update(b"]")
        elif torch.is_tensor(x):
            t = x.detach().cpu().contiguous().reshape(-1)
            h.update(f"T{x.dtype}{tuple(x.shape)}".encode())
            h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        else:
            h.update(repr(x).encode())

    walk(obj)
    return h.hexdigest()


def save_atomic(obj: dict[str, Any], path: str | Path) -> Path:
    """Write to a temporary file in the same folder, fsync, then rename: a crash leaves the old file or the new.

    A dict with a ``format_version`` gets its ``checksum``."""
    path = Path(path)
    if "format_version" in obj:
        obj = {**obj, "checksum": checksum(obj)}
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except (OSError, RuntimeError) as e:  # torch.save reports a failed write (a full disk) as a RuntimeError
        raise CheckpointError(f"checkpoint error: could not write {path}: {write_failure(e, path.parent)}") from None
    finally:
        if tmp is not None:  # gone after a successful rename; a failed write leaves no half file behind
            Path(tmp).unlink(missing_ok=True)
    return path


def write_failure(e: BaseException, folder: Path) -> str:
    """Why a write into ``folder`` failed, in a few words (the OS's reason; a full disk is named as such)."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if isinstance(e, OSError) and e.strerror:
        return e.strerror + (" (the disk is full)" if free == 0 and e.errno != errno.ENOSPC else "")
    return "the disk is full" if free is not None and free < 1 << 20 else "the write failed"


def _candidates(path: Path) -> list[Path]:
    """A run folder / checkpoints folder: its ``model_<it>.pt`` files, newest first."""
    folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    found = sorted(((int(m.group(1)), p) for p in folder.glob("model_*.pt") if (m := _NAME.search(p.name))),
                   reverse=True)
    if not found:
        raise CheckpointError(f"checkpoint error: no model_<iteration>.pt in {folder}")
    return [p for _, p in found]


def resolve_path(path: str | Path) -> Path:
    """A checkpoint file, or a run folder / checkpoints folder (then its newest ``model_<it>.pt``)."""
    path = Path(path)
    if path.is_dir():
        return _candidates(path)[0]
    if not path.exists():
        raise CheckpointError(f"checkpoint error: {path} does not exist")
    return path


def run_folder(checkpoint: Path) -> Path:
    """The run folder a checkpoint file belongs to (``<run>/checkpoints/model_<it>.pt`` or ``<run>/model_<it>.pt``)."""
    return checkpoint.parent.parent if checkpoint.parent.name == "checkpoints" else checkpoint.parent


def remove_stale_temporaries(folder: str | Path) -> int:
    """Delete the temporary files of saves that a crash interrupted (never a finished checkpoint); returns how many."""
    stale = list(Path(folder).glob(".model_*.pt.*.tmp"))
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)


def load_newest(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """A checkpoint file (loaded and verified), or of a run folder the newest checkpoint that loads and verifies.

    Newer files that fail (a crash mid-write on a file system without atomic rename, a corrupted disk) are
    skipped with a warning on stderr; if none verifies, the newest one's error is raised.
    """
    path = Path(path)
    if not path.is_dir():
        return path, load(path)
    candidates = _candidates(path)
    first_error: CheckpointError | None = None
    for candidate in candidates:
        try:
            data = load(candidate)
        except CheckpointError as e:
            first_error = first_error or e
            print(f"warning: skipping {e}", file=sys.stderr)
            continue
        return candidate, data
    assert first_error is not None
    raise first_error


def load_newest_if_any(folder: str | Path) -> tuple[Path, dict[str, Any]] | None:
    """``--resume auto``: the newest checkpoint of a run folder that verifies (newer damaged ones skipped with a
    warning, as ``load_newest``), or None where the folder does not exist, holds no ``model_<it>.pt`` or none of
    them verifies (then a warning says so): the run starts fresh in it."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    try:
        candidates = _candidates(folder)
    except CheckpointError:  # no checkpoint yet
        return None
    try:
        return load_newest(folder)
    except CheckpointError:
        print(f"warning: none of the {len(candidates)} checkpoint(s) in {candidates[0].parent} verifies; starting "
              "fresh", file=sys.stderr)
        return None


def load(path: str | Path) -> dict[str, Any]:
    """Load with ``weights_only=True`` (no code in the file runs); any failure is one clear line."""
    path = resolve_path(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "unsupported content"
        raise CheckpointError(f"checkpoint error: {path} was refused by the safe loader (weights_only): "
                              f"{first}") from None
    except (PermissionError, IsADirectoryError, NotADirectoryError, FileNotFoundError) as e:
        # the file, not its content
        raise CheckpointError(f"checkpoint error: {path} could not be read: {e.strerror or e}") from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as e:  # torch says EINVAL for a torn file
        raise CheckpointError(f"checkpoint error: {path} is corrupt or not a checkpoint ({type(e).__name__})") from None
    if not isinstance(data, dict) or "format_version" not in data:
        raise CheckpointError(f"checkpoint error: {path} is not a legged-mjx checkpoint (no format_version)")
    if data["format_version"] > FORMAT_VERSION:
        raise CheckpointError(f"checkpoint error: {path} has format_version {data['format_version']}, newer than this "
                              f"version supports ({FORMAT_VERSION}); upgrade legged-mjx")
    if data["format_version"] >= 2 and data.get("checksum") != checksum(data):
        raise CheckpointError(f"checkpoint error: {path} fails its checksum (the file was altered or damaged)")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise CheckpointError(f"checkpoint error: {path} lacks {', '.join(missing)}")
    if not all(torch.isfinite(t).all() for t in data["policy"].values()
               if torch.is_tensor(t) and t.is_floating_point()):
        raise CheckpointError(f"checkpoint error: {path} holds non-finite policy parameters")
    return data


def check_task(data: dict[str, Any], task: str, source: str) -> None:
    """One clear line if the checkpoint belongs to another task (check it before building anything from its config)."""
    if data.get("task") != task:
        raise CheckpointError(f"checkpoint error: {source} was trained on task '{data.get('task')}', not '{task}'")


def read_config(data: dict[str, Any], default: Any, source: str) -> Any:
    """The checkpoint's config laid over the task's ``default`` config (a key that moved since the file was written
    read at its new place); one clear line if it cannot be read."""
    from contract.errors import UserError
    from rl_core.config_io import from_dict

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
        raise CheckpointError(f"checkpoint error: {source} has action space {data.get('action_spec')}, "
                              f"this env has {spec}")
