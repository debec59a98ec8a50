"""Warp's kernel cache for our models: what a start-up compiles, a manifest per model, ahead-of-time CUDA builds.

MuJoCo Warp compiles two kinds of kernel modules: its own module-level ones (``forward``, ``solver``, ...) and the
modules it generates for one model and its options (34 for quadruped-flat). Warp keeps every compiled module in its
kernel cache under a name that holds the hash of the module's code and options (``wp_<module>_<hash>``) and, per
target, a file named by the device (``.o`` for the CPU with the compiler's target, ``.sm90.ptx`` /
``.sm90.cubin`` for CUDA). A binary is therefore only ever used for the code, options and architecture it was built
from: another warp-lang or mujoco_warp version, another model or another GPU architecture finds no file and compiles.
Warp builds into a folder of its own per process and thread and renames it into place, so two processes starting at
once are safe (both may compile; neither reads half a file).

On top of that this module keeps a small manifest per (model, warp-lang and mujoco_warp versions, device target):
the modules a training step loaded and their binaries. A start-up reads it to say, before the first step, whether
kernels will come from the cache or be compiled, and writes it after that step (``tools/warmup.py`` fills the cache
and the manifest ahead of a run).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

BINARY_SUFFIXES = (".o", ".ptx", ".cubin")
"""Files of Warp's kernel cache that hold compiled code (one per module and target)."""


@dataclass(frozen=True)
class KernelReport:
    """What the first step of a model did with Warp's kernel cache."""

    modules: int
    """Kernel modules loaded on the device (mujoco_warp's own and the ones generated for the model)."""
    compiled: int
    """Of those, how many were compiled (not found in the cache)."""
    seconds: float
    """Wall time of the first step, compilation and loading included."""
    device: str
    """Warp device alias (``cpu``, ``cuda:0``)."""

    def line(self) -> str:
        """One console line."""
        if self.compiled == 0:
            return f"kernels: {self.modules} modules from cache in {self.seconds:.1f} s ({self.device})"
        return (f"kernels: {self.modules} modules, {self.compiled} compiled in {self.seconds:.1f} s ({self.device}); "
                "cached for the next run")


def cache_root(wp: Any) -> Path:
    """Warp's kernel cache folder (with its version below the configured one); Warp must be initialized."""
    return Path(wp.config.kernel_cache_dir)


def cache_binaries(root: Path) -> set[str]:
    """Relative paths of the compiled binaries in the kernel cache (one folder per module)."""
    if not root.is_dir():
        return set()
    return {f"{d.name}/{f.name}" for d in root.iterdir() if d.is_dir() and d.name.startswith("wp_")
            for f in d.iterdir() if f.suffix in BINARY_SUFFIXES}


def target_name(device: Any) -> str:
    """The device's compile target: ``cpu`` or ``sm<arch>`` (what the binaries' names hold)."""
    return "cpu" if device.is_cpu else f"sm{device.arch}"


def model_key(wp: Any, mjw: Any, model: mujoco.MjModel, device: Any) -> str:
    """Key of a manifest: the compiled model's bytes, warp-lang's and mujoco_warp's versions and the device target."""
    buf = np.empty(mujoco.mj_sizeModel(model), np.uint8)
    mujoco.mj_saveModel(model, None, buf)
    version = getattr(mjw, "__version__", None) or _dist_version("mujoco-warp")
    h = hashlib.sha256(buf.tobytes())
    h.update(f"|warp {wp.config.version}|mujoco_warp {version}|{target_name(device)}".encode())
    return h.hexdigest()[:16]


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:  # pragma: no cover - an unusual install
        return "unknown"


def manifest_path(root: Path, key: str) -> Path:
    return root / "legged-mjx-manifests" / f"{key}.json"


def read_manifest(root: Path, key: str) -> list[str] | None:
    """The binaries a previous first step of this model loaded, or None (no manifest, unreadable)."""
    try:
        data = json.loads(manifest_path(root, key).read_text())
    except (OSError, ValueError):
        return None
    binaries = data.get("binaries") if isinstance(data, dict) else None
    return [str(b) for b in binaries] if isinstance(binaries, list) else None


def write_manifest(root: Path, key: str, binaries: list[str]) -> None:
    """Write the manifest atomically (a temporary file per process, then one rename)."""
    path = manifest_path(root, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"binaries": sorted(binaries)}))
        os.replace(tmp, path)
    except OSError:  # a read-only cache still runs; the next start-up just cannot predict
        pass


def loaded_binaries(wp: Any, device: Any) -> list[str]:
    """``module_dir/binary`` of every Warp module loaded on ``device`` (Warp's loaded variants per context)."""
    out = []
    for module in list(wp._src.context.user_modules.values()):
        for (context, block_dim) in list(module.execs):
            if context != device.context:
                continue
            ident = module.get_module_identifier(block_dim)
            out.append(f"{ident}/{module._get_compile_output_name(device, block_dim=block_dim)}")
    return out


def expected_cached(root: Path, key: str) -> bool:
    """Whether a previous start-up of this model on this target left every binary its step loads in the cache."""
    binaries = read_manifest(root, key)
    return binaries is not None and len(binaries) > 0 and all((root / b).is_file() for b in binaries)


def _say(line: str) -> None:
    if os.environ.get("RANK", "0") == "0":  # torchrun: rank 0 speaks for all
        print(line, file=sys.stderr, flush=True)


class KernelWatch:
    """Spans a model's first step (kernel preload, compile, capture): ``start`` says beforehand whether kernels will
    compile, ``finish`` how many modules came from the cache or were compiled and in how long, and records the
    manifest."""

    def __init__(self, wp: Any, mjw: Any, model: mujoco.MjModel, device: Any, say: Callable[[str], None] = _say):
        self._wp, self._device, self._say = wp, device, say
        self._root = cache_root(wp)
        self._key = model_key(wp, mjw, model, device)
        self._before: set[str] = set()
        self._t0 = 0.0
        self.report: KernelReport | None = None

    def start(self) -> None:
        if not expected_cached(self._root, self._key):
            self._say(f"kernels: compiling this model's kernels for {self._device.alias} unless cached (a machine's "
                      "first run, or a new model or version: about 20 s on the CPU, 60-90 s on a GPU; "
                      "`python -m tools.warmup --task TASK` does this ahead)")
        self._before = cache_binaries(self._root)
        self._t0 = time.perf_counter()

    def finish(self) -> KernelReport:
        seconds = time.perf_counter() - self._t0
        binaries = loaded_binaries(self._wp, self._device)
        compiled = sum(1 for b in binaries if b not in self._before)
        write_manifest(self._root, self._key, binaries)
        self.report = KernelReport(len(binaries), compiled, seconds, self._device.alias)
        self._say(self.report.line())
        return self.report


# --------------------------------------------------------------------------------------- ahead of time
def aot_compile(wp: Any, arches: list[int], module_names: list[str] | None = None,
                workers: int | None = None) -> list[Path]:
    """Compile Warp modules for CUDA architectures ``arches`` into the kernel cache, on a machine with or without a
    GPU (Warp's NVRTC is linked into warp-lang). For each architecture both files a CUDA load may look for are
    written: ``.sm<arch>.ptx`` (what Warp loads when the driver is at least as new as its toolkit) and
    ``.sm<arch>.cubin`` (older drivers). ``module_names``: Warp module names (default: every module loaded in this
    process, i.e. after a CPU step of the model). ``workers`` threads compile at once (default: one per core; Warp
    generates code under a lock and runs NVRTC outside it). Returns the files written or already there."""
    from concurrent.futures import ThreadPoolExecutor

    modules = wp._src.context.user_modules
    names = module_names if module_names is not None else [n for n, m in modules.items() if m.execs]
    jobs = [(modules[name], arch, use_ptx) for name in names for arch in arches for use_ptx in (True, False)]

    def build(job: tuple[Any, int, bool]) -> list[Path]:
        module, arch, use_ptx = job
        return [Path(p) for p in wp.compile_aot_module(module, arch=arch, use_ptx=use_ptx)]

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return [path for paths in pool.map(build, jobs) for path in paths]
