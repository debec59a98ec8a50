"""MuJoCo Warp as this project starts it: the import with our kernel cache, the library's kernel modules a step
uses, and the Warp model as training puts it. Shared by the backend (``warp.py``) and the ahead-of-time
prediction of its kernel variants (``warp_variants.py``), so the two build the same modules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import mujoco

CACHE_DIR = Path(os.environ.get("LEGGED_MJX_WARP_CACHE", Path.home() / ".cache" / "legged-mjx" / "warp"))
"""Warp's kernel cache (override with the LEGGED_MJX_WARP_CACHE environment variable)."""

PRELOAD_MODULES = ("forward", "smooth", "sensor", "passive", "constraint", "solver", "support", "derivative")
"""mujoco_warp's module-level kernel modules that a step of our models uses (``derivative``: the humanoid's
implicitfast integrator), its largest compiles. On the CPU device they are compiled, or read from the cache, in
parallel before the first step (a cold build of quadruped-flat: 20 s instead of 25 s), and the kernels mujoco_warp
generates for a model (34 modules for quadruped-flat) load one by one during that first step. On CUDA every variant
the step loads, these and the generated ones, loads in parallel before it (``WarpPhysics._load_step_kernels``; on an
H100 the seven largest took 22 s together where one after the other they take 68 s, bench/RESULTS.md)."""


def preload_kernels(wp: Any, device: Any) -> None:
    """Compile (or read from the kernel cache) ``PRELOAD_MODULES`` on ``device`` with one worker per core (at most
    8)."""
    modules = [wp.get_module(f"mujoco_warp._src.{name}") for name in PRELOAD_MODULES]
    wp.force_load(device=device, modules=modules, max_workers=min(8, os.cpu_count() or 1))


def import_warp() -> tuple[Any, Any]:
    """``(warp, mujoco_warp)``, initialized quietly with our kernel cache; one-line error when not installed."""
    try:
        import warp as wp
    except ImportError as e:  # pragma: no cover - depends on the install
        from contract.errors import UserError

        raise UserError(f"env.backend='warp' needs warp-lang and mujoco-warp ({e}); install them with "
                        "pip install -e '.[warp]' (offline GPU machines: docs/backends.md), or use "
                        "env.backend=native / mjx") from e
    if getattr(wp._src.context, "runtime", None) is None:  # configure once, before Warp initializes
        wp.config.quiet = True  # type: ignore[attr-defined]  # a config flag Warp does not declare
        # One line per kernel module loaded / compiled only with LEGGED_MJX_WARP_VERBOSE=1 (start-up diagnosis).
        wp.config.log_level = wp.LOG_INFO if os.environ.get("LEGGED_MJX_WARP_VERBOSE") == "1" else wp.LOG_WARNING
        if "WARP_CACHE_PATH" not in os.environ:  # Warp reads that variable itself
            # Warp adds its version below this folder at init; the setting must not change after that, or later
            # kernels go to (and are looked up in) another folder.
            wp.config.kernel_cache_dir = str(CACHE_DIR)
        wp.init()
    try:
        import mujoco_warp as mjw
    except ImportError as e:  # pragma: no cover - depends on the install
        from contract.errors import UserError

        raise UserError(f"env.backend='warp' needs mujoco-warp ({e}): pip install -e '.[warp]'") from e
    return wp, mjw


def put_model(mjw: Any, model: mujoco.MjModel, num_envs: int, model_fields: tuple[str, ...]) -> Any:
    """The Warp model of ``model`` as training runs it (on Warp's current device): ``model_fields`` per world, and
    overflows read per world from ``d.overflow`` rather than printed by kernels (an option compiled into them, so
    an ahead-of-time build must use this too)."""
    m = mjw.put_model(model, batch_sizes={name: num_envs for name in model_fields})
    m.opt.warn_overflow = 0
    return m
