import os
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# A suite started with SIGINT ignored (a background job of a non-interactive shell, nohup) would pass that on to
# every child it starts (an ignored disposition survives exec). With a Python handler here instead, every child
# starts with SIGINT at its default disposition, and Ctrl-C stops the suite itself. (The signal tests also set
# it for each child they signal: fault_injection.harness.with_sigint.)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# DDS (the Unitree connection, deploy/unitree) stays on this machine in every test and every process a test starts:
# the loopback interface, multicast off, the one peer 127.0.0.1 (tests/deploy/test_unitree_dds.py checks CycloneDDS's
# own
# account of it). CycloneDDS reads this when a process creates its first participant of a domain.
from deploy.unitree.dds import loopback_config  # noqa: E402

os.environ["CYCLONEDDS_URI"] = loopback_config()

# Several pytest-xdist workers (the README's command: -n auto --dist loadgroup): tests/parallel.py.
import pytest  # noqa: E402

from tests import onnx_registry, parallel  # noqa: E402

onnx_registry.install()  # one torchlib registry for the process's ONNX exports (2.7 s each otherwise)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: -n auto
def pytest_xdist_auto_num_workers(config):
    return parallel.worker_count()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return parallel.scheduler(config, log)


def pytest_configure(config):
    parallel.limit_threads(config)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    parallel.assign_groups(items)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reports its collection to the controller
def pytest_collection_finish(session):
    parallel.write_groups(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    with parallel.turn(item, nextitem):
        return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    parallel.alone(item)
