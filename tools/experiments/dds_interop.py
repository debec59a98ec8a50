"""Do two CycloneDDS versions exchange Unitree's messages? Publish and subscribe between this Python and another.

    python -m tools.experiments.dds_interop --other-python /path/to/venv/bin/python [--json]

For each message (a ``unitree_go`` and a ``unitree_hg`` LowCmd_, nested structs, and the flat
``legged_mjx.msg.dds_.BaseVelocity_``) and each direction, one process publishes 200 samples at 100 Hz on loopback
(``deploy.unitree.dds.loopback_config``, a fresh domain) while the other counts the samples it receives with a
correct checksum. Both interpreters need cyclonedds and numpy and run this repository's ``deploy/unitree``. Prints
one line per case: the versions, samples received of those sent (none: the subscriber died first), and how each
process ended (a negative exit code is the signal that killed it: -11, a segmentation fault). docs/deploy.md
reports the result for cyclonedds 11.0.1 against 0.10.2 (the version Unitree's robots run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from contract.errors import OneLineParser

ROOT = Path(__file__).resolve().parents[2]
SENT = 200
MESSAGES = ("unitree_go/LowCmd_", "unitree_hg/LowCmd_", "BaseVelocity_")


def _node(role: str, message: str, domain: int) -> None:
    """One side, in its own process: publish ``SENT`` samples, or count good ones for 5 s; prints a JSON line."""
    from importlib import metadata

    from deploy.unitree import idl
    from deploy.unitree.crc import checksum
    from deploy.unitree.dds import LOOPBACK, Participant
    from deploy.unitree.messages import BASE_VELOCITY, FAMILIES

    msg = BASE_VELOCITY if message == "BaseVelocity_" else FAMILIES[message.split("/")[0]]["LowCmd_"]
    cls = idl.idl_class(msg)
    dds = Participant(LOOPBACK, domain)
    print(json.dumps({"version": metadata.version("cyclonedds")}), flush=True)  # before anything can crash
    out: dict[str, Any] = {}
    if role == "pub":
        writer, sample = dds.writer("rt/interop", cls), idl.new(msg)
        time.sleep(1.0)  # discovery
        for k in range(SENT):
            if msg is BASE_VELOCITY:
                sample.tick = k
            else:
                sample.motor_cmd[0].q = float(k)
                sample.crc = checksum(msg, sample)
            writer.write(sample)
            time.sleep(0.01)
        time.sleep(0.5)
    else:
        reader, good, end = dds.reader("rt/interop", cls), 0, time.monotonic() + 5.0
        while time.monotonic() < end:
            for s in reader.take(N=16):
                good += isinstance(s, cls) and (msg is BASE_VELOCITY or s.crc == checksum(msg, s))
            time.sleep(0.005)
        out["received"] = good
    print(json.dumps(out), flush=True)


def _case(pub: str, sub: str, message: str, domain: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["-m", "tools.experiments.dds_interop", "--node", "{role}", "--message", message, "--domain", str(domain)]
    s = subprocess.Popen([sub, *[a.format(role="sub") for a in args]], cwd=ROOT, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    p = subprocess.run([pub, *[a.format(role="pub") for a in args]], cwd=ROOT, env=env, text=True,
                       capture_output=True, timeout=60)
    out, _err = s.communicate(timeout=60)

    def last(text: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for line in text.splitlines():
            if line.startswith("{"):
                found.update(json.loads(line))
        return found

    sub_line, pub_line = last(out), last(p.stdout)
    return {"message": message, "publisher": pub_line.get("version", "?"), "subscriber": sub_line.get("version", "?"),
            "received": sub_line.get("received"), "sent": SENT, "publisher_exit": p.returncode,
            "subscriber_exit": s.returncode}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = OneLineParser(prog="python -m tools.experiments.dds_interop", description=__doc__.splitlines()[0])
    p.add_argument("--other-python", help="interpreter with the other cyclonedds version")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--node", choices=("pub", "sub"), help=argparse.SUPPRESS)
    p.add_argument("--message", default=MESSAGES[0], help=argparse.SUPPRESS)
    p.add_argument("--domain", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.node:
        _node(args.node, args.message, args.domain)
        return []
    if not args.other_python:
        p.error("--other-python is required")
    from deploy.unitree.dds import free_domain

    here, other = sys.executable, args.other_python
    rows = [_case(pub, sub, m, free_domain()) for m in MESSAGES for pub, sub in ((here, other), (other, here))]
    for r in rows:
        print(f"{r['message']}: {r['publisher']} -> {r['subscriber']}: {r['received']} of {r['sent']} received; "
              f"exit codes publisher {r['publisher_exit']}, subscriber {r['subscriber_exit']}")
    if args.json:
        print(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
