"""envs/physics/warp_variants.py: the kernel module variants a CUDA step loads, predicted on this CPU-only machine
(mujoco_warp's own block sizes and CUDA-only branches), and built for a CUDA architecture under the names a CUDA load
looks for. The GPU side (a CPU-built cache makes a GPU compile nothing) is bench/gpu_check.sh's."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from envs.physics.registry import REGISTRY

pytestmark = [pytest.mark.warp,
              pytest.mark.skipif(not REGISTRY["warp"].available(), reason="needs warp-lang and mujoco-warp")]

ROOT = Path(__file__).resolve().parents[2]

# The modules an H200 compiled after a CPU-built cache (issue 38), with the m.block_dim field each is launched with.
CUDA_SIZED = {
    "_tile_cholesky_factorize_solve_block": "cholesky_factorize_solve", "_update_gradient_cholesky":
    "update_gradient_cholesky", "_linesearch_iterative_kernel": "linesearch_iterative", "_nxn_broadphase":
    "nxn_broadphase", "_efc_contact_jac_dense": "contact_jac_tiled", "_contact_sort": "contact_sort",
    "_update_gradient_JTDAJ_dense_tiled": "update_gradient_JTDAJ_dense"}


def quadruped_on_warp() -> tuple[Any, Any, Any, Any]:
    """(wp, mjw, m, d): quadruped-flat's scene put on Warp's CPU device (nothing stepped, nothing compiled)."""
    from configs.catalog import get_task
    from envs.physics.warp_setup import import_warp, put_model

    wp, mjw = import_warp()
    spec = get_task("quadruped-flat")
    cfg: Any = spec.default_config().env
    env: Any = spec.make_env(dataclasses.replace(cfg, num_envs=2, backend="native"),
                             torch.device("cpu"))
    with wp.ScopedDevice("cpu"):
        return wp, mjw, put_model(mjw, env.model, 2, ()), mjw.make_data(env.model, nworld=2)


def test_a_cuda_step_loads_mujoco_warps_own_block_sizes_which_a_cpu_step_never_does() -> None:
    from envs.physics.warp_setup import PRELOAD_MODULES
    from envs.physics.warp_variants import CUDA_DEFAULT_BLOCK_DIM, cards_for, predict

    wp, mjw, m, d = quadruped_on_warp()
    variants = predict(wp, mjw, m, d, cards_for([90]), PRELOAD_MODULES)
    sized = {v for v in variants if v.block_dim != CUDA_DEFAULT_BLOCK_DIM}
    for kernel, field in CUDA_SIZED.items():
        mine = [v for v in sized if v.module.startswith(f"{kernel}__locals__")]
        assert mine and all(v.block_dim == getattr(m.block_dim, field) for v in mine), (kernel, mine)
        for v in mine:  # the CPU's variant (block size 1) is another module in the cache
            module = wp.get_module(v.module)
            assert module.get_module_identifier(v.block_dim) != module.get_module_identifier(1)
            assert (None, v.block_dim) not in module.execs  # predicted, not loaded: the dry run ran nothing
    assert {v.module.split("__locals__")[0] for v in sized} == set(CUDA_SIZED)
    assert len(variants) == 42  # what an H200 loaded for quadruped-flat (issue 38: 34 cached + 8 compiled)
    # nothing of this model depends on the card beyond its architecture (no deterministic atomics)
    assert predict(wp, mjw, m, d, cards_for([80]), PRELOAD_MODULES) == variants


def test_the_prediction_puts_warp_back() -> None:
    from envs.physics.warp_variants import cards_for, predict

    wp, mjw, m, d = quadruped_on_warp()
    before = {name: getattr(wp, name) for name in ("launch", "launch_tiled", "get_device", "capture_while")}
    predict(wp, mjw, m, d, cards_for([90]))
    assert {name: getattr(wp, name) for name in before} == before
    assert wp.get_device().is_cpu


@pytest.mark.slow
def test_a_predicted_variant_is_built_for_sm90_under_the_name_a_cuda_load_looks_for(tmp_path: Path) -> None:
    """NVRTC builds the contact sort at its CUDA block size (64) for sm_90, PTX and CUBIN, in the folder and file
    names of that variant's hash (not the CPU's block size 1, not the default 256)."""
    code = f"""
import json, warp as wp
wp.config.quiet = True
wp.config.kernel_cache_dir = {str(tmp_path)!r}
wp.init()
from tests.envs.test_warp_variants import quadruped_on_warp
from envs.physics.warp_variants import cards_for, compile_variants, predict
wp, mjw, m, d = quadruped_on_warp()
v = next(v for v in predict(wp, mjw, m, d, cards_for([90])) if v.module.startswith("_contact_sort__"))
files = compile_variants(wp, {{v}}, [90])
module = wp.get_module(v.module)
print(json.dumps({{"files": [str(f) for f in files], "block_dim": v.block_dim, "root": wp.config.kernel_cache_dir,
                  "ident": {{b: module.get_module_identifier(b) for b in (1, 256, v.block_dim)}}}}))
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout.strip().splitlines()[-1])
    ident = data["ident"][str(data["block_dim"])]
    assert data["block_dim"] == 64 and len({*data["ident"].values()}) == 3
    root = Path(data["root"])  # Warp's versioned folder below the configured one
    assert root.parent == tmp_path
    names = sorted(Path(f).relative_to(root).as_posix() for f in data["files"])
    assert names == [f"{ident}/{ident}.sm90.cubin", f"{ident}/{ident}.sm90.ptx"], names
    assert all(Path(f).stat().st_size > 1000 for f in data["files"])
    assert ".target sm_90" in (root / ident / f"{ident}.sm90.ptx").read_text(errors="replace")


@pytest.mark.slow
def test_the_dry_run_finds_every_module_the_first_step_loads() -> None:
    """With the parallel load before the first step (the CUDA default, forced here on the CPU device), the step
    itself loads no module: the dry run on the real device found every variant (a fresh process: nothing loaded
    before); without it the step loads the model's modules itself."""
    code = """
import dataclasses, json, torch, warp as wp
from configs.catalog import get_task
spec = get_task("quadruped-flat")
env = spec.make_env(dataclasses.replace(spec.default_config().env, num_envs=4, backend="warp"), torch.device("cpu"))
def loaded():
    return {(n, str(key)) for n, m in wp._src.context.user_modules.items() for key in m.execs}
before = loaded()
env.reset(seed=0)
env.step(torch.zeros(4, env.action_spec.n))
print(json.dumps({"before": len(before), "new": sorted(n for n, _ in loaded() - before)}))
"""
    out = {}
    for choice in ("1", "0"):
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                           env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT),
                                "LEGGED_MJX_WARP_PARALLEL_LOAD": choice})
        assert r.returncode == 0, r.stderr[-2000:]
        out[choice] = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["1"]["before"] >= 40 and out["1"]["new"] == [], out["1"]
    assert len(out["0"]["new"]) >= 30, out["0"]  # the serial way: the step loads the generated modules


def test_the_cuda_only_build_predicts_what_the_training_model_loads() -> None:
    """``tools.warmup --cuda-only`` (no step, no CPU compiler) predicts from the same Warp model as a training run's
    (per-world fields, overflow warnings compiled out): the variants of a stepped env's own model, module hashes
    included."""
    import warp as wp

    from configs.catalog import get_task
    from envs.physics.warp_setup import PRELOAD_MODULES, import_warp, put_model
    from envs.physics.warp_variants import cards_for, predict

    _, mjw = import_warp()
    spec = get_task("quadruped-rough")
    cfg: Any = spec.default_config().env
    env: Any = spec.make_env(dataclasses.replace(cfg, num_envs=4, backend="warp"), torch.device("cpu"))
    native: Any = spec.make_env(dataclasses.replace(cfg, num_envs=2, backend="native"), torch.device("cpu"))
    cards = cards_for([90])
    trained = predict(wp, mjw, env.physics.m, env.physics.scratch_data(), cards, PRELOAD_MODULES)
    with wp.ScopedDevice("cpu"):
        m = put_model(mjw, native.model, 2, tuple(native.physics._fields))
        alone = predict(wp, mjw, m, mjw.make_data(native.model, nworld=1), cards, PRELOAD_MODULES)
    assert alone == trained

    def ident(v: Any) -> str:
        return str(wp.get_module(v.module).get_module_identifier(v.block_dim))

    assert sorted(map(ident, alone)) == sorted(map(ident, trained))


def test_cuda_only_needs_an_architecture() -> None:
    r = subprocess.run([sys.executable, "-m", "tools.warmup", "--task", "quadruped-flat", "--cuda-only"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode != 0 and "--cuda-only" in r.stderr and "--arch" in r.stderr and "Traceback" not in r.stderr
