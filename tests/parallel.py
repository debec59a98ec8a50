"""The default suite on several pytest-xdist workers (``-n auto --dist loadgroup``; docs/testing.md, "In parallel").

Hooks in ``tests/conftest.py`` call these; without xdist (one test file run alone, no ``-n``) none of this acts.

- ``@pytest.mark.exclusive`` (real-time bounds: the runtime against the simulated robot, timed watchdogs): the
  test's body runs with no other test running, so its timing is a serial run's. A run lock across the workers:
  every other test holds it shared from its setup to its teardown, an exclusive test's body holds it exclusively;
  a gate in front keeps a waiting exclusive test from being starved by the shared holders. The exclusive tests
  form one group (``ALONE``), run back to back by one worker under one exclusive hold: the other workers stop
  once, not once per test (their current test ends first: each stop costs a wait).
- ``@pytest.mark.xdist_group(NAME)``: the tests of one group run on one worker, one after another (the DDS tests:
  a random loopback domain each, and one of them checks that a second ``rt/lowcmd`` sender is refused).
- A test that uses a fixture of module, class or package scope (a trained or exported policy, a compiled scene)
  and names no group joins its file's group: one worker builds that fixture once, as a serial run does.
- The groups reach xdist's scheduler by a file (``groups/<worker>.json`` in the run's temporary folder): xdist 3.8's
  ``loadgroup`` marks a group by renaming the test's node id, which pytest 9.2 no longer lets a plugin do, and the
  groups were silently ignored (pytest-dev/pytest-xdist#1386); ``scheduler`` reads them from that file.
- Each worker's torch keeps ``cores // workers`` threads (at least one), so that the workers do not oversubscribe
  the cores (docs/testing.md has the measurement).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Optional

import pytest

ALONE = "alone"
"""The xdist group of the exclusive tests (whatever other group they name: they overlap no test anyway)."""
SHARED_SCOPES = ("module", "class", "package")
"""Fixture scopes whose value the tests of one file share (a session fixture is built once per worker anyway)."""
MAX_WORKERS = 4
"""``-n auto``'s cap: a worker holds up to about 3 GB (torch, JAX, Warp, MuJoCo), and exclusive tests idle the rest."""


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count() -> int:
    """``-n auto``: one worker per core, at most ``MAX_WORKERS``."""
    return max(1, min(cores(), MAX_WORKERS))


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def run_folder(config: pytest.Config) -> Path:
    """The run's temporary folder, which pytest prunes: a worker's basetemp is <that folder>/<worker id>."""
    base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return base.parent if is_worker(config) else base


def limit_threads(config: pytest.Config) -> None:
    """A worker's torch threads: the cores divided among the workers."""
    if not is_worker(config):
        return
    import torch

    workers = int(config.workerinput["workercount"])  # type: ignore[attr-defined]
    torch.set_num_threads(max(1, cores() // workers))


# ------------------------------------------------------------------------------------------------------ groups
def group_of(item: pytest.Item) -> Optional[str]:
    """The item's xdist group (several: joined as xdist joins them; an exclusive test: ``ALONE``), or None."""
    if _exclusive(item):
        return ALONE
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) if names else None


def _shares_a_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values())


def assign_groups(items: list[pytest.Item]) -> None:
    """A test with no group that shares a module-scoped fixture joins its file's group."""
    for item in items:
        if group_of(item) is None and _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def write_groups(session: pytest.Session) -> None:
    """A worker's collection: node id -> group, for ``scheduler`` in the controller (before the worker reports its
    collection, after which the controller schedules)."""
    if not is_worker(session.config):
        return
    folder = run_folder(session.config) / "groups"
    folder.mkdir(parents=True, exist_ok=True)
    groups = {item.nodeid: g for item in session.items if (g := group_of(item)) is not None}
    name = session.config.workerinput["workerid"]  # type: ignore[attr-defined]
    tmp = folder / f".{name}.tmp"
    tmp.write_text(json.dumps(groups))
    tmp.replace(folder / f"{name}.json")


def read_groups(folder: Path) -> dict[str, str]:
    return {k: v for f in sorted(folder.glob("*.json")) for k, v in json.loads(f.read_text()).items()}


def scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: xdist's own scheduler, with the groups read from the workers' files (None otherwise:
    xdist picks its scheduler)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class GroupScheduling(LoadGroupScheduling):
        groups: Optional[dict[str, str]] = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                self.groups = read_groups(run_folder(config) / "groups")
            return self.groups.get(nodeid) or super()._split_scope(nodeid)

    return GroupScheduling(config, log)


# ---------------------------------------------------------------------------------------------------- run lock
class RunLock:
    """A readers-writer lock across the workers of one run: two ``flock``-ed files in a folder they share."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self._gate: IO[str] = open(folder / "gate", "a")  # noqa: SIM115 - held for the worker's life
        self._run: IO[str] = open(folder / "run", "a")  # noqa: SIM115

    def take(self, alone: bool) -> None:
        """Shared (``alone`` False) or exclusive. Through the gate first: a waiting exclusive holder keeps it, so
        no new shared holder starts before it."""
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._run, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(self._gate, fcntl.LOCK_UN)

    def give(self, alone: bool) -> None:
        fcntl.flock(self._run, fcntl.LOCK_UN)
        if alone:
            fcntl.flock(self._gate, fcntl.LOCK_UN)


_LOCK: Optional[RunLock] = None
_ALONE = False
"""Whether this worker holds the run lock exclusively (kept from one exclusive test to the next)."""


def _lock(config: pytest.Config) -> RunLock:
    global _LOCK
    if _LOCK is None:
        _LOCK = RunLock(run_folder(config) / "run-lock")
    return _LOCK


def _exclusive(item: Optional[pytest.Item]) -> bool:
    return item is not None and item.get_closest_marker("exclusive") is not None


@contextmanager
def turn(item: pytest.Item, nextitem: Optional[pytest.Item]) -> Iterator[None]:
    """Around a test's setup, body and teardown: the run lock shared; after an exclusive test whose next test on
    this worker is not exclusive, the exclusive hold ends."""
    global _ALONE
    if not is_worker(item.config):
        yield
        return
    lock, shared = _lock(item.config), not _exclusive(item)
    if shared:
        lock.take(alone=False)
    try:
        yield
    finally:
        if shared:
            lock.give(alone=False)
        elif _ALONE and not _exclusive(nextitem):
            lock.give(alone=True)
            _ALONE = False


def alone(item: pytest.Item) -> None:
    """Before an exclusive test's body: the run lock exclusively, unless this worker holds it already."""
    global _ALONE
    if is_worker(item.config) and _exclusive(item) and not _ALONE:
        _lock(item.config).take(alone=True)
        _ALONE = True
