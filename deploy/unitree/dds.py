"""CycloneDDS set up for one network interface: the configuration (``CYCLONEDDS_URI``), the participant, the topics.

CycloneDDS, left to itself, picks the first multicast-capable interface and announces itself by multicast. The
real robot is reached on the interface its cable is in (``--interface eth0``, discovery as Unitree's SDK does
it); tests, rehearsals and the simulated robot use ``loopback_config()``: the loopback interface, multicast off,
the one peer 127.0.0.1, so that no packet leaves the machine. A random domain id per rehearsal keeps concurrent
ones apart unless two draw the same (``free_domain``).

The environment variable must be set before the process's first participant of that domain: ``participant()``
sets it, and the child processes a rehearsal starts inherit it.
"""

from __future__ import annotations

import os
import random
from typing import Any, Optional

from contract.errors import UserError

LOOPBACK = "lo"
"""Linux's loopback interface."""
ROBOT_DOMAIN = 0
"""The domain Unitree robots publish on."""
MAX_PARTICIPANTS = 16
"""Participants per domain on loopback (each takes a port pair; discovery probes them all)."""
MISSING = ("cyclonedds is not installed: the Unitree connection needs it (pip install -e \".[unitree]\"; see "
           "docs/deploy.md, section 'To a Unitree Go2 or G1 over DDS')")
"""The line said where the extra is missing."""


def config(interface: str, trace_file: Optional[str] = None) -> str:
    """The CycloneDDS XML for ``interface``: on loopback, multicast off and the single peer 127.0.0.1; on another
    interface, that interface alone with CycloneDDS's default discovery (multicast, as the robot uses it).
    ``trace_file``: CycloneDDS writes its configuration and the interfaces it selected there."""
    if interface == LOOPBACK:
        net = (f'<Interfaces><NetworkInterface name="{LOOPBACK}" multicast="false"/></Interfaces>'
               "<AllowMulticast>false</AllowMulticast>")
        discovery = (f"<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>{MAX_PARTICIPANTS}"
                     '</MaxAutoParticipantIndex><Peers><Peer Address="127.0.0.1"/></Peers></Discovery>')
    else:
        net = f'<Interfaces><NetworkInterface name="{interface}" priority="default" multicast="default"/></Interfaces>'
        discovery = ""
    trace = (f"<Tracing><Verbosity>config</Verbosity><OutputFile>{trace_file}</OutputFile></Tracing>"
             if trace_file else "")
    return f'<CycloneDDS><Domain Id="any"><General>{net}</General>{discovery}{trace}</Domain></CycloneDDS>'


def loopback_config(trace_file: Optional[str] = None) -> str:
    """What every test, rehearsal and simulated robot runs DDS with."""
    return config(LOOPBACK, trace_file)


def interfaces() -> list[str]:
    """The machine's network interfaces (Linux: /sys/class/net; elsewhere socket.if_nameindex)."""
    try:
        return sorted(os.listdir("/sys/class/net"))
    except OSError:
        import socket

        return sorted(name for _, name in socket.if_nameindex())


def check_interface(interface: str) -> None:
    """One UserError line for an interface this machine does not have."""
    known = interfaces()
    if known and interface not in known:
        raise UserError(f"--interface={interface!r} is not a network interface of this machine; it has: "
                        f"{', '.join(known)}")


def free_domain() -> int:
    """A domain id for one rehearsal on loopback (1-200; the robots use 0)."""
    return random.randint(1, 200)


def require() -> None:
    """One UserError line when cyclonedds is missing."""
    try:
        import cyclonedds  # noqa: F401
    except ImportError:
        raise UserError(MISSING) from None


class Participant:
    """A DDS participant on ``interface`` in ``domain`` with its topics (``topic(name, type)``)."""

    def __init__(self, interface: str, domain: int, trace_file: Optional[str] = None):
        require()
        os.environ["CYCLONEDDS_URI"] = config(interface, trace_file)
        from cyclonedds.domain import DomainParticipant

        self.interface, self.domain = interface, domain
        self.dp = DomainParticipant(domain)
        self._topics: dict[str, Any] = {}

    def topic(self, name: str, data_type: Any) -> Any:
        from cyclonedds.topic import Topic

        if name not in self._topics:
            self._topics[name] = Topic(self.dp, name, data_type)
        return self._topics[name]

    def writer(self, name: str, data_type: Any) -> Any:
        """A writer with DDS's default QoS (reliable, the newest sample kept), as Unitree's SDK writes."""
        from cyclonedds.pub import DataWriter

        return DataWriter(self.dp, self.topic(name, data_type))

    def reader(self, name: str, data_type: Any, on_data: Any = None) -> Any:
        """A best-effort reader that keeps only the newest sample (a late one is useless to a control loop);
        ``on_data(reader)`` runs in CycloneDDS's receive thread on each arrival."""
        from cyclonedds.core import Listener
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.sub import DataReader

        qos = Qos(Policy.History.KeepLast(1), Policy.Reliability.BestEffort)
        listener = Listener(on_data_available=on_data) if on_data is not None else None
        return DataReader(self.dp, self.topic(name, data_type), qos=qos, listener=listener)
