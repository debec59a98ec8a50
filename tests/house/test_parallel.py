"""The suite's parallel run (tests/parallel.py, README's ``-n auto --dist loadgroup``) on a generated suite of
sleeping tests, two xdist workers: an xdist group, a file sharing a module fixture and the exclusive tests each stay
on one worker, an exclusive test's body overlaps no other test, the other tests do run side by side, each worker's
torch keeps its share of the cores. pytest 9.2 with xdist 3.8 ignored the groups without a word
(pytest-dev/pytest-xdist#1386)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import parallel

ROOT = Path(__file__).resolve().parents[2]
RECORD = '''
import json, os, time
import torch

def record(tmp, name, kind):
    start = time.time()
    time.sleep(0.2)
    row = {"name": name, "kind": kind, "start": start, "end": time.time(),
           "worker": os.environ["PYTEST_XDIST_WORKER"], "threads": torch.get_num_threads()}
    with open(os.path.join(tmp, "log.jsonl"), "a") as f:
        f.write(json.dumps(row) + "\\n")
'''
SUITE = '''
import os
import pytest
from record import record
LOG = os.environ["PARALLEL_LOG"]

@pytest.mark.parametrize("i", range(6))
def test_plain(i):
    record(LOG, f"plain{i}", "plain")

@pytest.mark.exclusive
@pytest.mark.parametrize("i", range(3))
def test_alone(i):
    record(LOG, f"alone{i}", "alone")

@pytest.mark.parametrize("i", range(6))
def test_later(i):
    record(LOG, f"later{i}", "plain")

@pytest.mark.xdist_group("g")
@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    record(LOG, f"grouped{i}", "grouped")
'''
SHARING = '''
import os
import pytest
from record import record

@pytest.fixture(scope="module")
def built():
    return 1

@pytest.mark.parametrize("i", range(4))
def test_sharing(i, built):
    record(os.environ["PARALLEL_LOG"], f"sharing{i}", "sharing")
'''


def _overlap(a: dict, b: dict) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def test_groups_stay_on_one_worker_and_exclusive_bodies_run_alone(tmp_path):
    (tmp_path / "record.py").write_text(RECORD)
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "test_sharing.py").write_text(SHARING)
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403 - the suite's own hooks\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    exclusive: alone\n")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}", "PARALLEL_LOG": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                           "loadgroup", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(rows) == 23
    for kind in ("grouped", "sharing", "alone"):
        assert len({r["worker"] for r in rows if r["kind"] == kind}) == 1, [r for r in rows if r["kind"] == kind]
    alone = [r for r in rows if r["kind"] == "alone"]
    assert not [(a["name"], b["name"]) for a in alone for b in rows if b is not a and _overlap(a, b)]
    plain = [r for r in rows if r["kind"] != "alone"]
    assert any(_overlap(a, b) for a in plain for b in plain if a is not b), "nothing ran side by side"
    assert {r["threads"] for r in rows} == {max(1, parallel.cores() // 2)}


def test_the_readme_runs_what_ci_runs_on_every_core():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    ci = [line for line in lines if line and not line.startswith(("#", "set ", "cd "))]
    assert len(ci) == 1 and ci[0] in (ROOT / "README.md").read_text().splitlines(), ci
    assert ci[0].endswith("pytest -q -n auto --dist loadgroup"), ci
