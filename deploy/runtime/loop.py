"""The fixed-rate loop: every control period read the robot, build the observation, run the policy, write.

The schedule is fixed on the robot's clock (tick ``k`` starts at ``t0 + k * period``); a tick whose command
leaves after the next tick's scheduled start missed its deadline (the watchdog counts them). Each tick's
durations go to a ``TickLog`` (``timing.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Optional

import numpy as np

from contract.errors import UserError
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.controller import Controller
from deploy.runtime.robot import Robot
from deploy.runtime.safety import SafetyConfig
from deploy.runtime.supply import Supplies
from deploy.runtime.timing import TickLog

WARMUP_TICKS = 5
"""Ticks left out of the timing summary (first calls of the policy and the transport)."""


def realtime(priority: int) -> bool:
    """Run this process under SCHED_FIFO at ``priority`` (1-99), as a robot computer runs its control loop, and
    lock its memory (``mlockall``: no page fault stalls a tick; returns whether that worked). One UserError line
    where the OS refuses SCHED_FIFO (needs root or CAP_SYS_NICE; Linux only)."""
    import ctypes
    import ctypes.util
    import os

    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (AttributeError, OSError) as e:
        raise UserError(f"real-time priority {priority}: the OS refused SCHED_FIFO ({e}); run without it or grant "
                        "CAP_SYS_NICE") from None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.mlockall(1 | 2) == 0  # MCL_CURRENT | MCL_FUTURE
    except (OSError, AttributeError):
        return False


class Runtime:
    """``Runtime(policy, robot).run(seconds, commands)``: drive ``robot`` with ``policy`` in real time."""

    def __init__(self, policy: OnnxPolicy, robot: Robot, safety: Optional[SafetyConfig] = None,
                 joint_map: Optional[Mapping[str, str]] = None, rate_hz: Optional[float] = None,
                 supplies: Optional[Supplies] = None):
        """``supplies``: what ``robot`` gives (``supply.py``: e.g. ``LOW_STATE``); a policy that observes more is
        refused here in one line."""
        self.robot = robot
        self.controller = Controller(policy, robot.joint_names, safety, joint_map, supplies)
        self.period = 1.0 / rate_hz if rate_hz else self.controller.dt
        self.log = TickLog()

    def wait_for_sensors(self, timeout_s: float = 2.0) -> None:
        """Block until the robot delivers a sample; one-line UserError after ``timeout_s``."""
        end = time.monotonic() + timeout_s
        while self.robot.read() is None:
            if time.monotonic() > end:
                raise UserError(f"runtime: no sensor data from the robot within {timeout_s:g} s")
            time.sleep(0.001)

    def run(self, seconds: float, commands: Callable[[float], np.ndarray],
            on_tick: Optional[Callable[[float, np.ndarray], None]] = None) -> dict[str, Any]:
        """Run ``seconds`` of ticks; ``commands(t)``: the velocity command at ``t`` s after the start (vx, vy,
        yaw rate); ``on_tick(t, command)`` is called first in each tick. Returns the timing summary, the final
        safety mode and its reason."""
        ctl, robot, log = self.controller, self.robot, self.log
        ctl.warm_up()
        self.wait_for_sensors()
        clock, period = robot.clock, self.period
        t0 = clock() + period
        for k in range(int(round(seconds / period))):
            sched = t0 + k * period
            pause = sched - clock()
            if pause > 0:
                time.sleep(pause)
            start = clock()
            cmd = np.asarray(commands(k * period), dtype=np.float64)
            if on_tick is not None:
                on_tick(k * period, cmd)
            state = robot.read()
            t_read = clock()
            ctl.safety.check(state, t_read)
            action = None
            t_obs = t_read
            if ctl.safety.mode == "run" and state is not None:
                obs = ctl.observe(state, cmd)
                t_obs = clock()
                action = ctl.infer(obs)
            t_inf = clock()
            out = ctl.command(state, action)
            if out is not None:
                robot.write(out)
            t_write = clock()
            missed = t_write > sched + period
            ctl.safety.deadline(missed)
            log.add(k, start - sched, t_read - start, t_obs - t_read, t_inf - t_obs, t_write - t_inf, t_write - sched,
                    missed, ctl.safety.mode)
        return {"rate_hz": 1.0 / period, "seconds": seconds, **log.summary(skip=WARMUP_TICKS),
                "mode": ctl.safety.mode, "reason": ctl.safety.reason, "trips": ctl.safety.history,
                "clipped_ticks": ctl.safety.clipped}
