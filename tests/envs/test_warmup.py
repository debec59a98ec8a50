"""tools/warmup.py and the kernel report: after a warmup, a Warp run compiles nothing (Warp's own module log says so);
CUDA binaries built ahead of time on this CPU-only machine, named by module hash and architecture."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envs.physics.registry import REGISTRY

pytestmark = [pytest.mark.warp,
              pytest.mark.skipif(not REGISTRY["warp"].available(), reason="needs warp-lang and mujoco-warp")]

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def cold_cache(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An empty Warp kernel cache of this module's own, with Warp's per-module log switched on."""
    cache = tmp_path_factory.mktemp("warp-cache")
    return {**os.environ, "LEGGED_MJX_WARP_CACHE": str(cache), "LEGGED_MJX_WARP_VERBOSE": "1",
            "OMP_NUM_THREADS": "1"}


@pytest.mark.slow
def test_after_warmup_a_warp_run_compiles_nothing(cold_cache: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "warmup.json"
    warm = _run(["-m", "tools.warmup", "--task", "quadruped-flat", "--device", "cpu", "env.num_envs=4",
                 "--json", str(out)], cold_cache)
    assert warm.returncode == 0, warm.stderr[-2000:]
    compiled_in_warmup = re.findall(r"\(compiled\)", warm.stdout + warm.stderr)
    assert compiled_in_warmup, "an empty cache must compile (else this test proves nothing)"
    summary = json.loads(out.read_text())[0]
    assert summary["modules"] >= 30 and summary["compiled"] >= 30, summary
    assert "compiling this model's kernels" in warm.stderr  # said before the first step

    # Another number of worlds than the warmup's: kernels do not depend on it.
    run = _run(["train.py", "--task", "quadruped-flat", "env.backend=warp", "--num-envs", "8", "--max-iterations",
                "1", "--run-dir", str(tmp_path / "run"), "--quiet"], cold_cache)
    assert run.returncode == 0, run.stderr[-2000:]
    log = run.stdout + run.stderr
    cached = re.findall(r"load on device 'cpu' took [\d.]+ ms\s+\(cached\)", log)
    assert len(cached) >= summary["modules"], log[-2000:]
    assert "(compiled)" not in log, [line for line in log.splitlines() if "(compiled)" in line]
    m = re.search(r"kernels: (\d+) modules from cache in [\d.]+ s \(cpu\)", log)
    assert m and int(m.group(1)) == summary["modules"], log[-2000:]
    assert "compiling this model's kernels" not in log  # the manifest said they were all cached


@pytest.mark.slow
def test_cuda_binaries_ahead_of_time_without_a_gpu(tmp_path: Path) -> None:
    """Warp's NVRTC builds sm_90 code for a mujoco_warp module here, under the module's hash, as both files a CUDA
    load may look for (PTX with a current driver, CUBIN with an older one); another arch gets files of its own."""
    code = f"""
import json, warp as wp
wp.config.quiet = True
wp.config.kernel_cache_dir = {str(tmp_path)!r}
wp.init()
import mujoco_warp._src.support
from envs.physics.warp_kernels import aot_compile
name = "mujoco_warp._src.support"
files = aot_compile(wp, [90], [name])
print(json.dumps({{"files": [str(f) for f in files], "ident": wp.get_module(name).get_module_identifier()}}))
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout.strip().splitlines()[-1])
    ident = data["ident"]
    assert re.fullmatch(r"wp_mujoco_warp\._src\.support_[0-9a-f]{7}", ident)
    names = sorted(Path(f).name for f in data["files"])
    assert names == [f"{ident}.sm90.cubin", f"{ident}.sm90.ptx"], names
    for f in data["files"]:
        assert Path(f).is_file() and Path(f).stat().st_size > 1000
        assert Path(f).parent.name == ident  # where a CUDA load of this module looks (Warp's cache layout)
    ptx = (Path(data["files"][0]).parent / f"{ident}.sm90.ptx").read_text(errors="replace")
    assert ".target sm_90" in ptx
