"""A Unitree-side robot written from Unitree's public SDK alone: it imports nothing of this project.

    python tools/experiments/unitree_side_robot.py --sdk /path/to/unitree_sdk2_python --model go2.xml
        [--family go|hg] [--domain 7] [--seconds 15] [--fault frozen|bad_crc|lost|nan] [--fault-at 0.8]
        [--press start@0.3,A@2.0,select@4.5] [--forward-at 2.5] [--gantry-s 0] [--second-sender]
        [--record commands.json]

Unitree's SDK (``unitree_sdk2py`` of unitree_sdk2_python, not vendored: loaded from ``--sdk`` at run time)
brings the message classes (``LowState_``, ``LowCmd_`` of ``unitree_go`` and ``unitree_hg``), the checksum
(``utils.crc.CRC``) and the DDS channels (``core.channel``, ``ChannelFactoryInitialize(domain, "lo")`` as in its
low-level examples). MuJoCo simulates the model file at 500 Hz (one 2 ms step per low state; its actuators are
removed and each motor's torque is ``tau + kp (q - q_j) + kd (dq - dq_j)`` from the newest ``rt/lowcmd``, clipped to
the file's torque range; a motor in mode 0 gets none; a floor is added when the file has none). The slots are
Unitree's (Go2: FR, FL, RR, RL x hip, thigh, calf; G1: the 29 joints of its low-level example), matched to the
model's joints by name.

It publishes ``rt/lowstate`` every 2 ms (``tick`` in ms, the IMU, the wireless remote playing ``--press`` and the
left stick forward from ``--forward-at``, Unitree's CRC), and for policies that observe a base velocity the
documented ``rt/legged_mjx/base_velocity`` (``tick``, ``velocity[3]``: the true base velocity, as an estimator's).
Times (``--press``, ``--fault-at``, ``--forward-at``, ``--gantry-s``) count from the first command received.
Faults from ``--fault-at`` to the end: ``frozen`` (the same sample, same tick, republished), ``bad_crc`` (the
checksum off by one bit), ``lost`` (nothing published), ``nan`` (the first slot's q is NaN). ``--second-sender``
writes idle commands on ``rt/lowcmd`` from the start (marked, so they are not counted as the program's).

It prints ``READY`` once its channels exist, then one JSON line when the time is up (or SIGTERM): what it received
and when the fault began; ``--record`` writes every received command (monotonic time, the writer's timestamp, kp,
kd and q targets of the model's joints, the joints' positions then).
"""


import argparse
import importlib.util
import json
import math
import signal
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import mujoco
import numpy as np
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as ddstypes

GO2_SLOTS = [f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")]
"""Unitree's Go2 motor order (the SDK's go2 ``unitree_legged_const``: FR_0, FR_1, FR_2, FL_0, ...)."""
_G1_SIDE_LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
_G1_SIDE_ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
G1_SLOTS = ([f"left_{j}_joint" for j in _G1_SIDE_LEG] + [f"right_{j}_joint" for j in _G1_SIDE_LEG]
            + ["waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"]
            + [f"left_{j}_joint" for j in _G1_SIDE_ARM] + [f"right_{j}_joint" for j in _G1_SIDE_ARM])
"""Unitree's G1 motor order (the SDK's g1 low-level example, ``G1JointIndex`` 0-28)."""
BUTTON_BITS = {"R1": 0, "L1": 1, "start": 2, "select": 3, "R2": 4, "L2": 5, "F1": 6, "F3": 7,
               "A": 8, "B": 9, "X": 10, "Y": 11, "up": 12, "right": 13, "down": 14, "left": 15}
"""The remote's button bits (bytes 2-3 of ``wireless_remote``, the SDK's wireless_controller example)."""
MARK = 0x5EC0
"""``reserve`` of the second sender's commands (so the robot tells them from the program's)."""
PERIOD = 0.002


def load_sdk(path: str) -> dict[str, Any]:
    """Unitree's classes from the SDK at ``path`` (the repository's root or its ``unitree_sdk2py`` folder), loaded
    as the package ``unitree_sdk2py`` from there (the interpreter's search path is left as it is)."""
    pkg = Path(path)
    pkg = pkg if pkg.name == "unitree_sdk2py" else pkg / "unitree_sdk2py"
    spec = importlib.util.spec_from_file_location("unitree_sdk2py", pkg / "__init__.py",
                                                  submodule_search_locations=[str(pkg)])
    if spec is None or spec.loader is None or not (pkg / "__init__.py").is_file():
        raise SystemExit(f"--sdk={path}: no unitree_sdk2py package there (unitree_sdk2_python's folder expected)")
    sys.modules["unitree_sdk2py"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["unitree_sdk2py"])
    from unitree_sdk2py.core import channel
    from unitree_sdk2py.idl import default
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_ as GoLowCmd
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_ as GoLowState
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_ as HgLowCmd
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowState_ as HgLowState
    from unitree_sdk2py.utils.crc import CRC

    return {"channel": channel, "crc": CRC(), "go": (GoLowCmd, GoLowState, default.unitree_go_msg_dds__LowCmd_,
                                                     default.unitree_go_msg_dds__LowState_),
            "hg": (HgLowCmd, HgLowState, default.unitree_hg_msg_dds__LowCmd_, default.unitree_hg_msg_dds__LowState_)}


@dataclass
class BaseVelocity_(IdlStruct, typename="legged_mjx.msg.dds_.BaseVelocity_"):  # noqa: N801 (the DDS type's name)
    """``rt/legged_mjx/base_velocity`` as docs/deploy.md documents it (not Unitree's: an estimator's output)."""

    tick: ddstypes.uint32
    velocity: ddstypes.array[ddstypes.float32, 3]  # type: ignore[type-arg, valid-type]


def loopback_peer(sdk_config: str) -> str:
    """The SDK's own configuration for one interface, plus the peer 127.0.0.1 (unicast discovery with a participant
    index): ``python -m deploy.unitree --interface lo`` turns multicast off on loopback, so a robot side that only
    announced itself by multicast would never be found there (on a robot's network both sides use multicast)."""
    peer = '<Discovery><Peers><Peer address="127.0.0.1"/></Peers><ParticipantIndex>auto</ParticipantIndex></Discovery>'
    head, tail = sdk_config.rsplit("</Domain>", 1)
    return f"{head}{peer}</Domain>{tail}"


def load_model(path: str, slots: list[str]) -> tuple[mujoco.MjModel, np.ndarray, dict[str, Any]]:
    """The model at 500 Hz without actuators, with a floor; the start pose; per slot its joint's addresses."""
    m0 = mujoco.MjModel.from_xml_path(path)
    qpos0 = (m0.key_qpos[0] if m0.nkey else m0.qpos0).copy()
    limit = {}
    for i in range(m0.nu):
        j = m0.actuator_trnid[i, 0]
        lo, hi = (m0.actuator_forcerange[i] if m0.actuator_forcelimited[i] else m0.actuator_ctrlrange[i])
        if hi > lo:
            limit[m0.joint(j).name] = float(hi)
    spec = mujoco.MjSpec.from_file(path)
    for a in list(spec.actuators):
        spec.delete(a)
    for k in list(spec.keys):
        spec.delete(k)
    if not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.geoms):
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    spec.option.timestep = PERIOD
    m = spec.compile()
    names = [m.joint(j).name for j in range(m.njnt)]
    used = [(s, n) for s, n in enumerate(slots) if n in names]
    joint: dict[str, Any] = {"slot": np.array([s for s, _ in used]), "name": [n for _, n in used],
             "qadr": np.array([m.jnt_qposadr[names.index(n)] for _, n in used]),
             "vadr": np.array([m.jnt_dofadr[names.index(n)] for _, n in used]),
             "limit": np.array([limit.get(n, np.inf) for _, n in used]),
             "free": next((j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE), None)}
    if m.jnt_actfrcrange is not None:
        for k, n in enumerate(joint["name"]):
            hi = float(m.jnt_actfrcrange[names.index(n), 1])
            if hi > 0:
                joint["limit"][k] = min(joint["limit"][k], hi)
    return m, qpos0, joint


@dataclass
class Inbox:
    """The commands received (SDK listener thread) and the newest one applied (sim loop)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    newest: Optional[tuple[np.ndarray, ...]] = None
    first: Optional[float] = None
    commands: list[list[Any]] = field(default_factory=list)
    bad_crc: int = 0
    others: int = 0
    """Commands of the second sender (marked)."""
    program: int = 0
    """Commands not marked (the program under test)."""
    wrong_machine: int = 0
    fault_start: Optional[float] = None
    damped: Optional[float] = None
    """When the first damping command (no stiffness) after the fault arrived."""
    stiff_after_damping: int = 0


class Robot:
    """The robot's loop: MuJoCo, the low state out, the commands in."""

    def __init__(self, args: argparse.Namespace, sdk: dict[str, Any]):
        self.args, self.sdk, self.crc = args, sdk, sdk["crc"]
        self.hg = args.family == "hg"
        self.cmd_type, self.state_type, new_cmd, new_state = sdk[args.family]
        self.model, qpos0, self.j = load_model(args.model, G1_SLOTS if self.hg else GO2_SLOTS)
        self.data = mujoco.MjData(self.model)
        self.data.qpos[:] = qpos0
        mujoco.mj_forward(self.model, self.data)
        self.base = self.data.qpos[:7].copy() if self.j["free"] is not None else None
        self.inbox = Inbox()
        self.state = new_state()
        if self.hg:
            self.state.mode_machine = args.mode_machine
        else:
            self.state.head, self.state.level_flag = [0xFE, 0xEF], 0xFF
        self.other = None
        if args.second_sender:
            self.other = new_cmd()
            if self.hg:
                self.other.reserve = [MARK, 0, 0, 0]
            else:
                self.other.head, self.other.level_flag, self.other.reserve = [0xFE, 0xEF], 0xFF, MARK
            self.other.crc = self.crc.Crc(self.other)
        self.press = [(float(t), b) for b, t in (p.split("@") for p in args.press.split(",") if p)]
        self.quit = False

    def on_command(self, msg: Any) -> None:
        """The SDK's subscriber handler: check, record, keep the newest."""
        now = time.monotonic()
        box = self.inbox
        if msg.crc != self.crc.Crc(msg):
            box.bad_crc += 1
            return
        mark = msg.reserve[0] if self.hg else msg.reserve
        if mark == MARK:
            box.others += 1
            return
        box.program += 1
        if self.hg and msg.mode_machine != self.args.mode_machine:
            box.wrong_machine += 1
            return
        motors = [msg.motor_cmd[int(s)] for s in self.j["slot"]]
        on = np.array([m.mode != 0 for m in motors], dtype=float)
        kp, kd = on * np.array([m.kp for m in motors]), on * np.array([m.kd for m in motors])
        q, dq, tau = (np.array([getattr(m, k) for m in motors]) for k in ("q", "dq", "tau"))
        info = getattr(msg, "sample_info", None)
        sent_ns = int(info.source_timestamp) if info is not None else 0
        with box.lock:
            if box.first is None:
                box.first = now
            stiff = bool(np.any(kp > 0))
            if box.fault_start is not None and box.damped is None and not stiff:
                box.damped = now
            elif box.damped is not None and stiff:
                box.stiff_after_damping += 1
            box.newest = (q, dq, kp, kd, on * tau)
            box.commands.append([now, sent_ns, kp.tolist(), kd.tolist(), q.tolist(),
                                 self.data.qpos[self.j["qadr"]].tolist()])

    def remote(self, since: Optional[float]) -> list[int]:
        raw = bytearray(40)
        held = [b for t, b in self.press if since is not None and since >= t]
        if held:  # the latest press is held until the next one (each a short press of its own)
            struct.pack_into("<H", raw, 2, 1 << BUTTON_BITS[held[-1]])
        if since is not None and since >= self.args.forward_at > 0:
            struct.pack_into("<f", raw, 20, 0.5)  # ly: left stick half forward
        return list(raw)

    def physics(self, since: Optional[float]) -> None:
        d, j = self.data, self.j
        with self.inbox.lock:
            newest = self.inbox.newest
        d.qfrc_applied[:] = 0.0
        if newest is not None:
            q, dq, kp, kd, tau = newest
            u = tau + kp * (q - d.qpos[j["qadr"]]) + kd * (dq - d.qvel[j["vadr"]])
            d.qfrc_applied[j["vadr"]] = np.clip(np.nan_to_num(u), -j["limit"], j["limit"])
        if self.base is not None and (since is None or since < self.args.gantry_s):
            d.qpos[:7], d.qvel[:6] = self.base, 0.0
        mujoco.mj_step(self.model, d)

    def fill(self, since: Optional[float], tick: int) -> None:
        """The low state of this step (in place), its CRC included."""
        s, d, j = self.state, self.data, self.j
        for k, slot in enumerate(j["slot"]):
            ms = s.motor_state[int(slot)]
            ms.mode, ms.q, ms.dq = 1, float(d.qpos[j["qadr"][k]]), float(d.qvel[j["vadr"][k]])
            ms.tau_est = float(d.qfrc_applied[j["vadr"][k]])
        if self.base is not None:
            quat = d.qpos[3:7]
            s.imu_state.quaternion = [float(x) for x in quat]
            s.imu_state.gyroscope = [float(x) for x in d.qvel[3:6]]
            w, x, y, z = quat
            s.imu_state.rpy = [math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)),
                               math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x)))),
                               math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))]
        s.tick = tick
        s.wireless_remote = self.remote(since)
        if self.args.fault == "nan" and self.faulty(since):
            s.motor_state[int(j["slot"][0])].q = float("nan")
        s.crc = self.crc.Crc(s)
        if self.args.fault == "bad_crc" and self.faulty(since):
            s.crc ^= 0x1

    def base_velocity(self) -> list[float]:
        """The base's linear velocity in its own frame (what an estimator would publish)."""
        if self.base is None:
            return [0.0, 0.0, 0.0]
        rot = self.data.xmat[self.model.jnt_bodyid[self.j["free"]]].reshape(3, 3)
        return [float(x) for x in rot.T @ self.data.qvel[:3]]

    def faulty(self, since: Optional[float]) -> bool:
        if not self.args.fault or since is None or since < self.args.fault_at:
            return False
        with self.inbox.lock:
            if self.inbox.fault_start is None:
                self.inbox.fault_start = time.monotonic()
        return True

    def run(self) -> dict[str, Any]:
        ch = self.sdk["channel"]
        ch.ChannelConfigHasInterface = loopback_peer(ch.ChannelConfigHasInterface)
        ch.ChannelFactoryInitialize(self.args.domain, "lo")
        state_pub = ch.ChannelPublisher("rt/lowstate", self.state_type)
        state_pub.Init()
        sub = ch.ChannelSubscriber("rt/lowcmd", self.cmd_type)
        sub.Init(self.on_command, 0)
        other_pub = None
        if self.other is not None:
            other_pub = ch.ChannelPublisher("rt/lowcmd", self.cmd_type)
            other_pub.Init()
        vel_pub = None
        if self.args.base_velocity:
            vel_pub = ch.ChannelPublisher("rt/legged_mjx/base_velocity", BaseVelocity_)
            vel_pub.Init()
        print("READY", flush=True)
        t0 = time.monotonic()
        k, lag = 0, 0.0
        while not self.quit and time.monotonic() - t0 < self.args.seconds:
            with self.inbox.lock:
                first = self.inbox.first
            since = None if first is None else time.monotonic() - first
            self.physics(since)
            if other_pub is not None:
                other_pub.Write(self.other)
            if not (self.args.fault in ("frozen", "lost") and self.faulty(since)):
                self.fill(since, int(1e3 * (time.monotonic() - t0)) & 0xFFFFFFFF)
            if not (self.args.fault == "lost" and self.faulty(since)):
                state_pub.Write(self.state)
            if vel_pub is not None:
                v = self.base_velocity()
                vel_pub.Write(BaseVelocity_(tick=int(self.state.tick), velocity=v))  # type: ignore[arg-type]
            k += 1
            wait = t0 + k * PERIOD - time.monotonic()
            if since is not None:
                lag = max(lag, -wait)
            if wait < -0.02:  # fell behind (the machine's load): go on from now, as a robot's clock would
                k = int((time.monotonic() - t0) / PERIOD)
            time.sleep(max(0.0, wait))
        return self.report(lag)

    def report(self, lag: float) -> dict[str, Any]:
        box = self.inbox
        with box.lock:
            out = {"received": box.program, "others": box.others, "bad_crc": box.bad_crc,
                   "wrong_mode_machine": box.wrong_machine, "first": box.first, "fault_start": box.fault_start,
                   "damped": box.damped, "stiff_after_damping": box.stiff_after_damping,
                   "max_lag_ms": round(1e3 * lag, 1), "base_height": float(self.data.qpos[2]),
                   "joints": self.j["name"]}
            if self.args.record:
                with open(self.args.record, "w") as f:
                    json.dump({**out, "commands": box.commands}, f)
        return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sdk", required=True, help="unitree_sdk2_python's folder (holding unitree_sdk2py)")
    p.add_argument("--model", required=True, help="MuJoCo model file of the robot")
    p.add_argument("--family", choices=("go", "hg"), default="go", help="go: Go2 messages; hg: G1 messages")
    p.add_argument("--domain", type=int, default=0)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--fault", choices=("", "frozen", "bad_crc", "lost", "nan"), default="")
    p.add_argument("--fault-at", type=float, default=0.0)
    p.add_argument("--press", default="", help="button@seconds,... (after the first command)")
    p.add_argument("--forward-at", type=float, default=0.0, help="left stick half forward from then (0: never)")
    p.add_argument("--gantry-s", type=float, default=0.0, help="base held in place until then")
    p.add_argument("--second-sender", action="store_true")
    p.add_argument("--mode-machine", type=int, default=5, help="hg: the G1 variant reported (commands echo it)")
    p.add_argument("--base-velocity", action="store_true", help="publish rt/legged_mjx/base_velocity")
    p.add_argument("--record", default="")
    args = p.parse_args()
    robot = Robot(args, load_sdk(args.sdk))
    signal.signal(signal.SIGTERM, lambda *_: setattr(robot, "quit", True))
    print(json.dumps(robot.run()), flush=True)


if __name__ == "__main__":
    main()
