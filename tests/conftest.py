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
