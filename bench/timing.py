"""Timing shared by the update benchmarks: wait for the device, and time several candidates in alternation."""

from __future__ import annotations

import time
from collections.abc import Callable

import torch


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_alternating(runs: dict[str, Callable[[], None]], repeats: int, device: torch.device) -> dict[str, list[float]]:
    """Seconds of each call: one untimed warm-up round, then ``repeats`` rounds with the candidates taking turns,
    so that CPU noise (other jobs, frequency changes) falls on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for rep in range(repeats + 1):
        for name, run in runs.items():
            sync(device)
            t0 = time.perf_counter()
            run()
            sync(device)
            if rep > 0:
                times[name].append(time.perf_counter() - t0)
    return times
