"""tools.experiments.suite_cpu: the per-test CPU record of a suite run (docs/testing.md), on a generated suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITE = '''
import subprocess, sys

def test_busy():
    sum(i * i for i in range(200_000))

def test_starts_a_child():
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(2_000_000))"], check=True, timeout=60)
'''


def test_each_test_is_recorded_with_its_children_and_the_report_ranks_the_files(tmp_path):
    (tmp_path / "test_generated.py").write_text(SUITE)
    out = tmp_path / "record"
    env = {**os.environ, "SUITE_CPU_DIR": str(out), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                          "tools.experiments.suite_cpu", str(tmp_path / "test_generated.py")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {json.loads(line)["id"].split("::")[1]: json.loads(line)
            for path in out.glob("*.jsonl") for line in path.read_text().splitlines()}
    assert set(rows) == {"test_busy", "test_starts_a_child"}
    assert rows["test_busy"]["popen"] == 0 and rows["test_starts_a_child"]["popen"] == 1
    assert rows["test_starts_a_child"]["children"] > rows["test_busy"]["children"]
    assert rows["test_busy"]["cpu"] > 0.0
    shown = subprocess.run([sys.executable, "-m", "tools.experiments.suite_cpu", str(out), "--top", "5"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("2 tests: wall ") and "in 1 started" in shown.stdout
    assert "| test_generated.py |" in shown.stdout


def test_an_empty_folder_is_one_line(tmp_path):
    shown = subprocess.run([sys.executable, "-m", "tools.experiments.suite_cpu", str(tmp_path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 1 and shown.stderr.count("\n") == 1
    assert shown.stderr.startswith(f"error: {tmp_path} holds no *.jsonl rows")
