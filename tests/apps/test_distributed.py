"""torchrun / gloo: two CPU ranks keep identical parameters and learn what one process learns from the same total
batch; a 2-rank train.py run writes checkpoints that single-process play.py loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]

pytestmark = pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                                reason="needs torch.distributed with gloo")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT, **kw)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


@pytest.mark.slow
def test_two_ranks_stay_identical_and_match_one_process_on_the_same_total_batch(tmp_path):
    _run(TORCHRUN + ["tests/distributed_worker.py", str(tmp_path / "two")])
    _run([sys.executable, "tests/distributed_worker.py", str(tmp_path / "one")])
    r0, r1 = (torch.load(tmp_path / "two" / f"rank{r}.pt", weights_only=True) for r in (0, 1))
    single = torch.load(tmp_path / "one" / "rank0.pt", weights_only=True)
    for name, value in r0["policy"].items():
        assert torch.equal(value, r1["policy"][name]), name  # bit-identical across ranks
        torch.testing.assert_close(value, single["policy"][name], rtol=1e-5, atol=1e-6, msg=name)
    assert r0["lr"] == r1["lr"] == pytest.approx(single["lr"])  # the adaptive rule saw the same (global) KL
    initial = torch.load(tmp_path / "one" / "rank0.pt", weights_only=True)["policy"]["obs_normalizer.count"]
    assert initial == 8 * 16  # the normalizer counted every rank's samples
    for r in (0, 1):  # shutdown really ended gloo (its threads outliving it made ranks abort at exit now and then)
        threads = tmp_path / "two" / f"rank{r}_threads.json"
        if threads.exists():  # Linux
            assert not [name for name in json.loads(threads.read_text()) if "gloo" in name]


@pytest.mark.slow
def test_torchrun_training_checkpoint_loads_in_single_process_play(tmp_path):
    run = tmp_path / "run"
    out = _run(TORCHRUN + ["train.py", "--task", "CartPole-v1", "--num-envs", "4", "--max-iterations", "3", "--run-dir",
                           str(run), "runner.num_steps_per_env=16"]).stdout
    assert "on each of 2 ranks" in out and out.count("done:") == 1  # rank 0 alone prints
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["model_3.pt"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] == 3 * 2 * 4 * 16  # samples of both ranks
    _run([sys.executable, "play.py", "--checkpoint", str(run), "--episodes", "2", "--json", str(tmp_path / "m.json")])
    assert json.loads((tmp_path / "m.json").read_text())["episodes"] == 2
