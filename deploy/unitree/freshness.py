"""Which low states the sequence may act on: ``LowStateGate`` judges each ``LowState_`` as it arrives.

A low state is fresh when
    its ``crc`` is Unitree's checksum of the sample (``crc.py``, over the packed ``LowState_`` as Unitree's SDK checks
    it); a wrong one is counted, said once in one line, and the sample is dropped (treated as missing);
    its ``tick`` (the robot's ms clock) differs from the last fresh one's: the same tick again is the same sample
    republished (a frozen state), dropped; a robot that sends no tick (always 0) is judged by the whole sample
    (its checksum stands for it): an identical sample is frozen;
    on ``unitree_hg`` (G1), its ``mode_machine`` (the robot variant, echoed in every command) is set (not 0) and the
    one of the first fresh sample: a missing or changing one is said in one line and the sample dropped.
The gate never stamps a dropped sample, so a robot whose samples are all dropped looks like a robot that stopped
sending: the safety layer's watchdog (``SafetyConfig.max_unchanged_s``) damps it, and ``cause()`` names why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from deploy.unitree.crc import checksum
from deploy.unitree.messages import FAMILIES


class LowStateGate:
    """Judges the low states of one message family; ``accept(sample)`` says whether to act on it."""

    def __init__(self, family: str, out: Callable[[str], None] = print):
        self.msg = FAMILIES[family]["LowState_"]
        self.hg = family == "unitree_hg"
        self.out = out
        """Where each fault's one line goes."""
        self.bad_crc = 0
        """Samples dropped for a wrong checksum (whole run)."""
        self.frozen = 0
        """Samples dropped as a repeat of the last fresh one (whole run)."""
        self.wrong_machine = 0
        """``unitree_hg`` samples dropped for a missing or changed ``mode_machine`` (whole run)."""
        self.mode_machine: Optional[int] = None
        """The ``mode_machine`` of the first fresh sample (``unitree_hg``)."""
        self.tick: Optional[int] = None
        """The last fresh sample's tick (ms)."""
        self._key: Optional[tuple[int, int]] = None
        self._since: dict[str, int] = {}
        """Drops since the last fresh sample, by fault."""
        self._said: set[str] = set()

    def _say(self, fault: str, line: str) -> None:
        if fault not in self._said:
            self._said.add(fault)
            self.out(line)

    def _drop(self, fault: str) -> bool:
        self._since[fault] = self._since.get(fault, 0) + 1
        return False

    def accept(self, s: Any) -> bool:
        """Whether ``s`` (a ``LowState_``) is fresh; a fault's first occurrence is one line."""
        tick = int(s.tick)
        if int(s.crc) != checksum(self.msg, s):
            self.bad_crc += 1
            self._say("crc", f"unitree: a low state with a wrong CRC (tick {tick} ms): dropped as missing; "
                      "later ones are counted")
            return self._drop("crc")
        key = (tick, 0 if tick else int(s.crc))
        if key == self._key:
            self.frozen += 1
            return self._drop("frozen")
        if self.hg:
            machine = int(s.mode_machine)
            if machine == 0:
                self.wrong_machine += 1
                self._say("machine0", "unitree: the G1's low state has no mode_machine (0): dropped as missing; "
                          "is the robot in its debug mode?")
                return self._drop("machine")
            if self.mode_machine is None:
                self.mode_machine = machine
            elif machine != self.mode_machine:
                self.wrong_machine += 1
                self._say("machine", f"unitree: the G1's mode_machine changed from {self.mode_machine} to {machine}: "
                          "its low states are dropped as missing (restart the program for the new robot type)")
                return self._drop("machine")
        self._key, self.tick = key, tick
        self._since = {}
        return True

    def dropped(self) -> int:
        """Samples dropped since the last fresh one (or the start)."""
        return sum(self._since.values())

    def cause(self) -> str:
        """Why no fresh sample came since the last one, in words (for the watchdog's line)."""
        s = self._since
        if not s:
            return "lost: no low state arrived"
        if "crc" in s and len(s) == 1:
            return f"wrong CRC: {s['crc']} low state(s) dropped"
        if "frozen" in s and len(s) == 1:
            return f"frozen: the robot's tick stayed at {self.tick} ms over {s['frozen']} low state(s)"
        if "machine" in s and len(s) == 1:
            return f"mode_machine: {s['machine']} low state(s) with a missing or changed mode_machine"
        return "dropped: " + ", ".join(f"{n} {k}" for k, n in sorted(s.items()))
