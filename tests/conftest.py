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
