"""Where the test suite's CPU goes: each test's wall time, its own CPU and its child processes' CPU, per file.

    SUITE_CPU_DIR=/tmp/suite_cpu python -m pytest -q -n auto --dist loadgroup -p tools.experiments.suite_cpu
    python -m tools.experiments.suite_cpu /tmp/suite_cpu [--top 30]

The first command is the README's test command with this module as a pytest plugin: every process that runs
tests (each xdist worker) appends one JSON line per test to ``<pid>.jsonl`` in ``SUITE_CPU_DIR`` (setup, call and
teardown together; the CPU of the child processes the test waited for, and how many it started, counted by an
audit hook on ``subprocess.Popen``). The second prints the totals and the files that cost the most. Two cores
finish the suite in about (its CPU + each worker's collection) / 2 at best: that is the floor the 6 minutes of
issue 49 are measured against (docs/testing.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV = "SUITE_CPU_DIR"
"""The folder the plugin writes to (the plugin does nothing without it)."""

_current: dict[str, Any] = {"popen": 0}


def _audit(event: str, args: tuple) -> None:
    if event == "subprocess.Popen":
        _current["popen"] += 1


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(ENV):
        sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    folder = os.environ.get(ENV)
    _current["popen"] = 0
    start, before = time.perf_counter(), os.times()
    yield
    if not folder:
        return
    after = os.times()
    row = {"id": item.nodeid, "wall": time.perf_counter() - start,
           "cpu": after.user + after.system - before.user - before.system,
           "children": (after.children_user + after.children_system
                        - before.children_user - before.children_system),
           "popen": _current["popen"]}
    Path(folder).mkdir(parents=True, exist_ok=True)
    with open(Path(folder) / f"{os.getpid()}.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")


def report(folder: Path, top: int) -> list[str]:
    """The lines ``main`` prints: totals, per process, and the ``top`` files by CPU (own + children)."""
    rows = [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]
    if not rows:
        raise SystemExit(f"error: {folder} holds no *.jsonl rows; run pytest with -p tools.experiments.suite_cpu "
                         f"and {ENV}={folder} first")
    wall, cpu = sum(r["wall"] for r in rows), sum(r["cpu"] for r in rows)
    lines = [f"{len(rows)} tests: wall {wall:.0f} s, own CPU {cpu:.0f} s, child processes' CPU "
             f"{sum(r['children'] for r in rows):.0f} s in {sum(r['popen'] for r in rows)} started"]
    for path in sorted(folder.glob("*.jsonl")):
        mine = [json.loads(line) for line in path.read_text().splitlines()]
        lines.append(f"  process {path.stem}: {len(mine)} tests, wall {sum(r['wall'] for r in mine):.0f} s, "
                     f"CPU {sum(r['cpu'] + r['children'] for r in mine):.0f} s")
    per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for r in rows:
        p = per[r["id"].split("::")[0]]
        p[0] += r["wall"]
        p[1] += r["cpu"]
        p[2] += r["children"]
        p[3] += r["popen"]
    lines.append("| file | wall (s) | own CPU (s) | children's CPU (s) | processes started |")
    lines.append("|---|---|---|---|---|")
    for name, (wall, cpu, children, popen) in sorted(per.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:top]:
        lines.append(f"| {name} | {wall:.1f} | {cpu:.1f} | {children:.1f} | {popen:.0f} |")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help=f"the {ENV} folder of a suite run")
    p.add_argument("--top", type=int, default=30, help="files to list")
    args = p.parse_args()
    print("\n".join(report(args.folder, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
