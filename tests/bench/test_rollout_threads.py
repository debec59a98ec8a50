"""bench.rollout_threads: both candidates run on one runner and the report carries the thread counts compared."""

from __future__ import annotations

import json

from bench.rollout_threads import main


def test_both_candidates_run_and_are_reported(tmp_path) -> None:
    out = tmp_path / "rt.json"
    main(["--task", "quadruped-flat", "--num-envs", "8", "--repeats", "1", "--json", str(out)])
    r = json.loads(out.read_text())
    assert r["rollout_torch_threads"] == 1 and r["num_envs"] == 8
    assert set(r["samples_per_s"]) == {"asked", "runner_threads"} and r["ratio"] > 0
