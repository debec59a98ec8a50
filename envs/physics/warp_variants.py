"""The kernel module variants a CUDA device loads for a model's step, predicted on a machine without a GPU.

Warp compiles a module once per block size (``block_dim``): the size is part of the module's hash and of its cache
file's name (``wp_<module>_<hash>.sm90.cubin``). A step on Warp's CPU device loads every module with block size 1,
while on CUDA mujoco_warp launches its kernels with the default 256 or with sizes of its own (``m.block_dim``: tile
Cholesky, the gradient updates, the iterative line search, the broadphase, the dense contact Jacobian, the contact
sort, ...), and takes CUDA-only branches (``wp.get_device().is_cuda``: the fused sparse LDL solve, the elliptic-cone
gradient, the solver's conditional loop). So compiling for CUDA what the CPU step loaded misses those variants.

``predict`` runs one ``mujoco_warp.step`` as a dry run under a description of a CUDA device (``CudaCard``: its
architecture and multiprocessor count): ``wp.get_device()`` answers with that description inside mujoco_warp,
launches are recorded instead of run, the solver's conditional loop body is recorded once, and occupancy queries
answer from the description. Every ``(module, block_dim)`` a launch on that device would load comes out, exactly as
``Module.load`` resolves it (explicit sizes as given, none or 0 as 256; an occupancy query loads the module's
default). ``compile_variants`` builds them for CUDA architectures with Warp's NVRTC, which needs no GPU.

What depends on the card: in mujoco_warp 4.0 only the multiprocessor count enters, and only as launch sizes (grid
widths, ``max_blocks``) except with ``opt.deterministic`` atomics, where it sizes per-kernel record buffers that are
compiled in; ``CARDS`` lists the common data-centre cards so that those variants are built for each. Everything else
is the model's (``m.block_dim`` comes from the model, not the device) and the architecture's (one binary per ``sm``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CUDA_DEFAULT_BLOCK_DIM = 256
"""What a CUDA launch without a block size (or with 0) uses (Warp's ``_resolve_launch_block_dim``)."""


@dataclass(frozen=True)
class CudaCard:
    """What mujoco_warp reads of a CUDA device."""

    name: str
    """The card (for messages)."""
    arch: int
    """Compute capability as Warp writes it (90 for sm_90)."""
    sm_count: int
    """Multiprocessors."""


CARDS: tuple[CudaCard, ...] = (
    CudaCard("A100", 80, 108), CudaCard("A10", 86, 72), CudaCard("L4", 89, 58), CudaCard("L40S", 89, 142),
    CudaCard("RTX 4090", 89, 128), CudaCard("H100 SXM", 90, 132), CudaCard("H200", 90, 132),
    CudaCard("B200", 100, 148), CudaCard("RTX PRO 6000 Blackwell", 120, 188), CudaCard("RTX 5090", 120, 170))
"""Common cards per architecture (their multiprocessor counts from NVIDIA's specifications)."""


def cards_for(arches: list[int]) -> list[CudaCard]:
    """The listed cards of each architecture (a made-up one with 132 multiprocessors for an architecture not listed)."""
    out = []
    for arch in arches:
        known = [c for c in CARDS if c.arch == arch]
        out += known or [CudaCard(f"sm_{arch}", arch, 132)]
    return out


@dataclass(frozen=True)
class Variant:
    """One compiled unit Warp loads: a module at a block size."""

    module: str
    """Warp module name (``wp.get_module(name)``)."""
    block_dim: int
    """Block size of the load (part of the module's hash)."""


class _FakeCuda:
    """A CUDA device as mujoco_warp sees it (``wp.get_device()`` inside a prediction)."""

    is_cuda, is_cpu = True, False

    def __init__(self, card: CudaCard):
        self.arch, self.sm_count, self.alias, self.name = card.arch, card.sm_count, "cuda:0", card.name


def _cuda_block_dim(requested: Any) -> int:
    block = int(requested) if requested is not None else 0
    return block if block > 0 else CUDA_DEFAULT_BLOCK_DIM


def _empty(dim: Any) -> bool:
    """Whether a launch of ``dim`` threads is empty (Warp then returns before loading the module)."""
    sizes = [dim] if isinstance(dim, int) else list(dim)
    return any(int(n) == 0 for n in sizes)


def _concrete(kernel: Any, args: list[Any]) -> Any:
    """The overload a launch of a generic kernel with ``args`` uses (as ``wp.launch`` picks it)."""
    if getattr(kernel, "is_generic", False):
        return kernel._add_normalized_overload(kernel.infer_argument_types(args))
    return kernel


def _block_dim(wp: Any, device: Any, requested: Any) -> int:
    """The block size a launch asking for ``requested`` loads on ``device`` (Warp's own rule where it has one)."""
    resolve = getattr(wp._src.context, "_resolve_launch_block_dim", None)
    if resolve is not None:
        return int(resolve(device, requested))
    return _cuda_block_dim(requested) if device.is_cuda else 1  # pragma: no cover - older Warp


@contextmanager
def _recording(wp: Any, device: Any, found: set[Variant]) -> Iterator[None]:
    """Inside: ``wp.get_device()`` answers ``device`` (a ``_FakeCuda`` or a real device) and launches are recorded
    with the block size they load on it instead of being run."""

    def launch(kernel: Any, dim: Any = None, inputs: Any = (), outputs: Any = (), *args: Any, **kw: Any) -> None:
        if _empty(dim):
            return
        kernel = _concrete(kernel, [*inputs, *outputs])
        found.add(Variant(kernel.module.name, _block_dim(wp, device, kw.get("block_dim"))))

    def suggested(kernel: Any, device_: Any = None) -> tuple[int, int]:
        if not device.is_cuda:
            return 1, 1  # Warp's answer on the CPU (nothing loaded)
        found.add(Variant(kernel.module.name, _cuda_block_dim(kernel.module.options.get("block_dim"))))  # default
        return CUDA_DEFAULT_BLOCK_DIM, 4 * device.sm_count

    def capture_while(condition: Any, while_body: Callable[..., Any], stream: Any = None, **kwargs: Any) -> None:
        while_body(**kwargs)  # a conditional graph node: the body is captured once

    def capture_if(condition: Any, on_true: Any = None, on_false: Any = None, stream: Any = None, **kw: Any) -> None:
        for branch in (on_true, on_false):
            if callable(branch):
                branch(**kw)

    real_get_device = wp.get_device
    patches: dict[str, Any] = {
        "launch": launch, "launch_tiled": launch, "get_suggested_block_size": suggested,
        "capture_while": capture_while, "capture_if": capture_if,
        "get_device": lambda *a, **k: device if not a and not k else real_get_device(*a, **k)}
    saved = {name: getattr(wp, name) for name in patches}
    for name, fn in patches.items():
        setattr(wp, name, fn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(wp, name, fn)


def _dry_run(wp: Any, mjw: Any, m: Any, d: Any, device: Any, found: set[Variant]) -> None:
    with _recording(wp, device, found):
        mjw.step(m, d)


def predict(wp: Any, mjw: Any, m: Any, d: Any, cards: list[CudaCard], preload: tuple[str, ...] = ()) -> set[Variant]:
    """The variants one ``mujoco_warp.step(m, d)`` loads on each of ``cards`` (a dry run on the CPU: nothing is
    launched or compiled; ``d`` keeps its state up to Warp's own memsets and copies), and the default variants of the
    mujoco_warp modules ``preload`` names (``envs/physics/warp.py``: ``wp.force_load`` before the first step)."""
    found: set[Variant] = set()
    for card in cards:
        _dry_run(wp, mjw, m, d, _FakeCuda(card), found)
    for name in preload:
        module = wp.get_module(f"mujoco_warp._src.{name}")
        found.add(Variant(module.name, _cuda_block_dim(module.options.get("block_dim"))))
    return found


def predict_for_device(wp: Any, mjw: Any, m: Any, d: Any, device: Any) -> set[Variant]:
    """The variants one ``mujoco_warp.step(m, d)`` loads on the real Warp ``device`` (a dry run, as ``predict``)."""
    found: set[Variant] = set()
    with wp.ScopedDevice(device):
        _dry_run(wp, mjw, m, d, device, found)
    return found


def load_parallel(wp: Any, variants: set[Variant], device: Any, workers: int) -> None:
    """Load (compile when not cached) ``variants`` on ``device`` with ``workers`` threads: Warp hashes modules under
    its code-generation lock and compiles and loads them outside it, so compiles and loads overlap."""
    def load(variant: Variant) -> None:
        wp.get_module(variant.module).load(device, variant.block_dim)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(load, sorted(variants, key=lambda v: (v.module, v.block_dim))))


def binary_name(wp: Any, variant: Variant, arch: int, use_ptx: bool) -> str:
    """``<module dir>/<file>`` of a variant's CUDA binary in the kernel cache, as ``Module.load`` looks it up."""
    module = wp.get_module(variant.module)
    ident = module.get_module_identifier(variant.block_dim)
    return f"{ident}/{module._get_compile_output_name(None, arch, '', use_ptx, block_dim=variant.block_dim)}"


def compile_variants(wp: Any, variants: set[Variant], arches: list[int], workers: int | None = None) -> list[Path]:
    """Build each variant for each architecture, PTX and CUBIN (a driver at least as new as Warp's toolkit loads
    ``.ptx``, an older one ``.cubin``), into Warp's kernel cache; a file already there is kept. Returns the files."""
    root = Path(wp.config.kernel_cache_dir)

    def build(job: tuple[Variant, int, bool]) -> Path:
        variant, arch, use_ptx = job
        module = wp.get_module(variant.module)
        module.get_module_hash(variant.block_dim)  # resolves this variant's options (as Module.load does)
        options = module.resolved_options[variant.block_dim]
        module._compile(None, output_arch=arch, use_ptx=use_ptx, options=options)
        return root / binary_name(wp, variant, arch, use_ptx)

    jobs = [(v, a, ptx) for v in sorted(variants, key=lambda v: (v.module, v.block_dim)) for a in arches
            for ptx in (True, False)]
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return list(pool.map(build, jobs))


def write_cuda_manifests(wp: Any, mjw: Any, model: Any, variants: set[Variant], arches: list[int]) -> None:
    """The start-up manifest of ``model`` for each architecture (``envs/physics/warp_kernels.py``): a GPU's first
    run then says beforehand that its kernels come from the cache."""
    from envs.physics.warp_kernels import cache_root, model_key, write_manifest

    for arch in arches:
        key = model_key(wp, mjw, model, _FakeCuda(cards_for([arch])[0]))
        write_manifest(cache_root(wp), key, [binary_name(wp, v, arch, use_ptx=False) for v in variants])


def ahead_of_time(model: Any, arches: list[int], fields: tuple[str, ...] = (), physics: Any = None) -> dict[str, Any]:
    """Predict what a CUDA step of ``model`` loads on the listed cards of each architecture, compile it for those
    architectures and write the manifests; a summary. ``physics``: a ``WarpPhysics`` of the model (its Warp model is
    used); else the model is put on Warp's CPU device with ``fields`` batched per world (no kernel runs or compiles
    for the CPU: a machine without Warp's CPU compiler can build a GPU's cache)."""
    import time

    from envs.physics.warp_setup import PRELOAD_MODULES, import_warp, put_model

    t0 = time.perf_counter()
    wp, mjw = import_warp()
    if physics is not None:
        m, d = physics.m, physics.scratch_data()
    else:
        with wp.ScopedDevice("cpu"):
            m, d = put_model(mjw, model, 2, fields), mjw.make_data(model, nworld=1)
    variants = predict(wp, mjw, m, d, cards_for(arches), PRELOAD_MODULES)
    files = compile_variants(wp, variants, arches)
    write_cuda_manifests(wp, mjw, model, variants, arches)
    return {"arches": arches, "cuda_variants": len(variants), "aot_files": len(files),
            "aot_s": round(time.perf_counter() - t0, 2)}
