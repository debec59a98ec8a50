"""The rehearsal over Unitree's DDS (``python -m deploy.rehearse POLICY --transport unitree-dds``): the runtime
drives ``deploy/unitree/simrobot.py`` through ``UnitreeRobot``, the adapter a real robot gets, on loopback.

The velocity command reaches the runtime as it does on the robot: the simulated robot plays the wireless remote
(sticks released for the first ``stand_s`` after the first command, then set to the command) and the runtime
reads the sticks from the low state. Scoring uses the command the sticks give.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Optional

import numpy as np

from deploy.onnx_policy import OnnxPolicy
from deploy.simrobot import SimRobotConfig
from deploy.unitree.dds import LOOPBACK, Participant, free_domain, loopback_config, require
from deploy.unitree.profiles import for_policy
from deploy.unitree.remote import StickMap
from deploy.unitree.robot import UnitreeRobot
from deploy.unitree.simrobot import DdsSimConfig, RemoteStep


class DdsTransport:
    """``rehearse_one``'s link for ``--transport unitree-dds``."""

    module = "deploy.unitree.simrobot"

    def __init__(self, policy: OnnxPolicy, sim: SimRobotConfig, command: tuple[float, float, float], stand_s: float,
                 profile: Optional[str] = None):
        require()
        self.policy = policy
        self.profile = for_policy(policy.metadata, profile)
        remote = (RemoteStep(0.0), RemoteStep(stand_s, command=command))
        self.cfg = DdsSimConfig(sim, self.profile.name, free_domain(), remote)
        self.sticks = StickMap(policy.metadata)
        self.robot: Optional[UnitreeRobot] = None
        self.participant: Optional[Participant] = None

    def config(self) -> str:
        return self.cfg.to_json()

    def env(self) -> dict[str, str]:
        return {**os.environ, "CYCLONEDDS_URI": loopback_config()}

    def connect(self, domain: int) -> UnitreeRobot:
        self.participant = Participant(LOOPBACK, domain)
        needs_velocity = any(name == "base_lin_vel" for name, _ in self.policy.metadata["obs_layout"])
        self.robot = UnitreeRobot(self.profile, self.participant, base_velocity=needs_velocity)
        return self.robot

    def commands(self, _scheduled: Callable[[float], np.ndarray]) -> Callable[[float], np.ndarray]:
        robot, sticks = self.robot, self.sticks
        assert robot is not None
        return lambda _t: sticks.command(robot.remote)

    def on_tick(self, _t: float, _cmd: np.ndarray) -> None:
        pass

    def stop(self, proc: subprocess.Popen) -> None:
        proc.terminate()  # SIGTERM: the simulated robot ends its run and reports

    def close(self) -> None:
        self.robot = None
        self.participant = None
