"""The simulated robot of the rehearsal: its own process, plain MuJoCo in real time, behind UDP on loopback.

    python -m deploy.simrobot CONFIG_JSON      (a ``SimRobotConfig`` as JSON; started by ``deploy/rehearse.py``)

It prints ``READY <port>`` once its socket is bound, streams sensor samples to the runtime that said hello
(``deploy/runtime/udp.py``), applies the joint commands it receives, and after ``seconds`` (or a quit packet)
prints one JSON line: what happened to the robot (falls, tracking errors, distance) and how well it kept real time.

The robot: the trained scene from the policy file (``scene_mjb``) stepped at ``pd_rate_hz`` (``actuation=
"torque_pd"``: the file's position servos removed, a torque PD ``kp (target - q) - kd qd + tau_ff`` clipped to the
torque limits and scaled by ``motor_strength``, as a motor driver's firmware runs it), or at the training timestep
with the file's position actuators (``actuation="file"``). Sensor samples go out at ``publish_rate_hz`` with
Gaussian noise, ``sensor_latency_s`` after they were taken; commands take effect ``command_latency_s`` after they
arrive. Model errors: ``kp_scale`` / ``kd_scale`` on the gains the runtime asks for, ``friction_scale`` on every
geom's sliding friction, ``added_mass_kg`` on the base body. Joints cross the link in ``sdk_order``: the policy's
joints and the ones it holds outside its action space (``held_joint_names``), each driven by the command like any
joint.
"""

from __future__ import annotations

import collections
import json
import socket
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import mujoco
import numpy as np

from contract import schema
from contract.errors import UserError
from deploy.maker_model import maker_scene
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime import udp
from deploy.runtime.loop import realtime
from deploy.runtime.robot import JointCommand, RobotState
from deploy.sim2sim import load_scene
from deploy.terrain import HeightMap, HeightScan, tiles


@dataclass(frozen=True)
class Noise:
    """Standard deviations of the sensor noise."""

    joint_pos: float = 0.003
    """rad."""
    joint_vel: float = 0.05
    """rad/s."""
    gyro: float = 0.02
    """rad/s."""
    lin_vel: float = 0.03
    """m/s (the base velocity estimate)."""
    tilt: float = 0.005
    """rad, a random small rotation of the IMU orientation."""
    scan: float = 0.005
    """m."""


@dataclass(frozen=True)
class SimRobotConfig:
    """One rehearsal run of the simulated robot."""

    policy: str
    """The ONNX file whose metadata gives the scene, joints, gains and limits."""
    seconds: float = 10.0
    """Real-time length of the run (s)."""
    actuation: str = "torque_pd"
    """torque_pd (a torque PD at pd_rate_hz, the file's servos removed) or file (the scene's position actuators at the
    training timestep)."""
    pd_rate_hz: float = 1000.0
    """Physics and PD rate of torque_pd (Hz)."""
    publish_rate_hz: float = 500.0
    """Sensor samples per second sent to the runtime."""
    sensor_latency_s: float = 0.0
    """Delay of the sensor path (s)."""
    command_latency_s: float = 0.0
    """Delay of the command path (s)."""
    motor_strength: float = 1.0
    """Factor on every joint torque (and its limit)."""
    kp_scale: float = 1.0
    """Factor on the stiffness the runtime sends."""
    kd_scale: float = 1.0
    """Factor on the damping the runtime sends."""
    friction_scale: float = 1.0
    """Factor on every geom's sliding friction."""
    added_mass_kg: float = 0.0
    """Mass added to the base body (kg)."""
    noise: Noise = field(default_factory=Noise)
    """Sensor noise (all zeros: none)."""
    base_velocity: bool = True
    """Whether the robot sends a base velocity estimate."""
    sdk_order: Optional[tuple[str, ...]] = None
    """The joints in the order the robot's packets carry them (None: ``robot_joints``' order)."""
    score_from_s: float = 2.0
    """Tracking errors are averaged from this long after the first command on (s)."""
    seed: int = 0
    """Noise seed."""
    rt_priority: int = 0
    """SCHED_FIFO priority of the simulated robot's process (0: the normal scheduler)."""
    model: str = ""
    """An MJCF of the robot simulated instead of the policy file's scene (the maker's file, torque_pd only:
    ``deploy/maker_model.py``); '': the policy file's scene."""

    @staticmethod
    def from_json(text: str) -> SimRobotConfig:
        d = json.loads(text)
        d["noise"] = Noise(**d.get("noise", {}))
        if d.get("sdk_order") is not None:
            d["sdk_order"] = tuple(d["sdk_order"])
        return SimRobotConfig(**d)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


class SimulatedRobot:
    """The MuJoCo side: the model with the run's errors, the motor model, the sensors (no networking)."""

    def __init__(self, cfg: SimRobotConfig):
        self.cfg = cfg
        meta = OnnxPolicy(cfg.policy).metadata
        self.meta = meta
        m = self.model = load_scene(meta)
        if cfg.model:
            if cfg.actuation != "torque_pd":
                raise UserError(f"simrobot: --model needs actuation torque_pd, not {cfg.actuation!r}")
            m = self.model = maker_scene(cfg.model, meta, m)
        base = m.joint(meta["base_joint"])
        self.bq, self.bv = int(base.qposadr[0]), int(base.dofadr[0])
        names = robot_joints(meta)
        order = list(cfg.sdk_order) if cfg.sdk_order is not None else names
        if sorted(order) != sorted(names):
            raise UserError(f"simrobot: sdk_order must name the policy's trained and held joints once each: "
                            f"{', '.join(names)}")
        self.joint_names = tuple(order)
        joints = [m.joint(n) for n in order]
        self.qadr = np.array([j.qposadr[0] for j in joints])
        self.dadr = np.array([j.dofadr[0] for j in joints])
        by_joint = {int(m.actuator_trnid[a, 0]): a for a in range(m.nu)}
        self.act = np.array([by_joint[j.id] for j in joints])
        perm = [names.index(n) for n in order]
        servos = schema.servos(meta, f"simrobot: policy file {cfg.policy}")
        self.default = np.asarray(servos.pose, dtype=np.float64)[perm]
        kp = np.asarray(servos.kp, dtype=np.float64)[perm]
        kd = np.asarray(servos.kd, dtype=np.float64)[perm]
        lim = np.asarray(servos.torque_limits, dtype=np.float64)[perm]
        self.limit = cfg.motor_strength * lim
        m.geom_friction[:, 0] *= cfg.friction_scale
        m.body_mass[m.jnt_bodyid[base.id]] += cfg.added_mass_kg
        if cfg.actuation == "torque_pd":
            m.opt.timestep = 1.0 / cfg.pd_rate_hz
            m.actuator_gainprm[:] = 0.0
            m.actuator_biasprm[:] = 0.0
        elif cfg.actuation != "file":
            raise UserError(f"simrobot: actuation={cfg.actuation!r} is not allowed; expected torque_pd or file")
        self.data = mujoco.MjData(m)
        self.ground = HeightMap(m)
        scan_cfg = meta.get("height_scan")
        self.scan = HeightScan({**scan_cfg, "offset": 0.0, "clip": 1e9}, self.ground) if scan_cfg else None
        self.command = JointCommand(self.default.copy(), kp, kd, np.zeros(len(order)))
        """Held until the first command arrives: the firmware's stance at the default pose."""
        self.rng = np.random.default_rng(cfg.seed)
        sensors = meta["termination_contact_sensors"]
        self.forbidden = np.array([_force_adr(m, n) for n in sensors], dtype=int)
        self._reset()

    def _reset(self) -> None:
        m, d, meta = self.model, self.data, self.meta
        x, y = tiles(meta, None)[0]
        mujoco.mj_resetData(m, d)
        d.qpos[self.bq:self.bq + 3] = [x, y, float(self.ground.height(np.array([x, y]))) + meta["base_height"]]
        d.qpos[self.bq + 3:self.bq + 7] = [1.0, 0.0, 0.0, 0.0]
        d.qpos[self.qadr] = self.default
        mujoco.mj_forward(m, d)
        self.start = d.qpos[self.bq:self.bq + 2].copy()

    @property
    def dt(self) -> float:
        return float(self.model.opt.timestep)

    def step(self) -> None:
        """One physics step under the current command."""
        c, d, cfg = self.command, self.data, self.cfg
        q, qd = d.qpos[self.qadr], d.qvel[self.dadr]
        if cfg.actuation == "torque_pd":
            tau = c.kp * cfg.kp_scale * (c.target - q) - c.kd * cfg.kd_scale * qd + c.tau_ff
            d.qfrc_applied[self.dadr] = np.clip(cfg.motor_strength * tau, -self.limit, self.limit)
        else:  # the file's position servos: ctrl = target, gains per command
            m, s = self.model, cfg.motor_strength
            m.actuator_gainprm[self.act, 0] = s * cfg.kp_scale * c.kp
            m.actuator_biasprm[self.act, 1] = -s * cfg.kp_scale * c.kp
            m.actuator_biasprm[self.act, 2] = -s * cfg.kd_scale * c.kd
            m.actuator_forcerange[self.act, 0], m.actuator_forcerange[self.act, 1] = -self.limit, self.limit
            d.ctrl[self.act] = c.target
        mujoco.mj_step(self.model, d)

    def truth(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Base linear velocity (base frame), angular velocity (base frame), rotation matrix base -> world."""
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, self.data.qpos[self.bq + 3:self.bq + 7])
        r = rot.reshape(3, 3)
        return r.T @ self.data.qvel[self.bv:self.bv + 3], self.data.qvel[self.bv + 3:self.bv + 6].copy(), r

    def fallen(self) -> bool:
        d = self.data
        if not (np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()):
            return True
        _, _, r = self.truth()
        if r[2, 2] < np.cos(1.0):
            return True
        return bool((d.sensordata[self.forbidden] > self.meta["contact_force_threshold"]).any())

    def sample(self, stamp: float) -> RobotState:
        """The sensors now, with noise."""
        d, n, rng = self.data, self.cfg.noise, self.rng
        lin, ang, _ = self.truth()
        quat = d.qpos[self.bq + 3:self.bq + 7].copy()
        if n.tilt > 0:
            half = 0.5 * rng.normal(0.0, n.tilt, 3)
            out = np.empty(4)
            mujoco.mju_mulQuat(out, quat, np.concatenate([[1.0], half]) / np.sqrt(1.0 + half @ half))
            quat = out
        scan = None
        if self.scan is not None:
            base = d.qpos[self.bq:self.bq + 3]
            w, x, y, z = d.qpos[self.bq + 3:self.bq + 7]
            scan = self.scan(base, float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))))
            scan = scan + rng.normal(0.0, n.scan, scan.shape)
        J = len(self.qadr)
        return RobotState(stamp, d.qpos[self.qadr] + rng.normal(0.0, n.joint_pos, J),
                          d.qvel[self.dadr] + rng.normal(0.0, n.joint_vel, J), quat, ang + rng.normal(0.0, n.gyro, 3),
                          lin + rng.normal(0.0, n.lin_vel, 3) if self.cfg.base_velocity else None, scan)


def robot_joints(meta: dict[str, Any]) -> list[str]:
    """The simulated robot's joints in the policy's order: the trained ones, then the held ones."""
    return list(meta["joint_names"]) + list(meta.get("held_joint_names", []))


def _force_adr(model: mujoco.MjModel, sensor: str) -> int:
    s = model.sensor(sensor)
    return int(model.sensor_adr[s.id]) + (1 if s.type[0] == mujoco.mjtSensor.mjSENS_CONTACT else 0)


class UdpLink:
    """The simulated robot's side of the UDP link (``deploy/runtime/udp.py``): hello, quit and command packets in,
    state packets out to the runtime that said hello."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.peer: Optional[tuple[str, int]] = None
        self.quit = False
        """The runtime asked the run to end."""

    def receive(self) -> list[tuple[JointCommand, np.ndarray]]:
        """The commands that arrived since the last call, each with the velocity command it tracks."""
        out = []
        while True:
            try:
                data, addr = self.sock.recvfrom(udp.MAX_PACKET)
            except BlockingIOError:
                break
            kind = data[:4]
            if kind == udp.HELLO:
                self.peer = addr
            elif kind == udp.QUIT:
                self.quit = True
            elif kind == udp.COMMAND:
                _, _, c, ref = udp.unpack_command(data)
                out.append((c, ref))
        return out

    def encode(self, seq: int, state: RobotState) -> Any:
        """What ``send`` later sends of a sample taken now."""
        return udp.pack_state(seq, state)

    def send(self, packet: Any) -> bool:
        """Send one sample; False while no runtime listens."""
        if self.peer is None:
            return False
        self.sock.sendto(packet, self.peer)
        return True


def serve(robot: SimulatedRobot, link: Any) -> dict[str, Any]:
    """The real-time loop: physics at the robot's rate paced by the wall clock, samples out and commands in through
    ``link`` (``UdpLink``, or the DDS one of ``deploy/unitree/simrobot.py``)."""
    cfg, dt = robot.cfg, robot.dt
    publish_every = max(1, round(1.0 / (cfg.publish_rate_hz * dt)))
    score_every = max(1, round(0.02 / dt))
    sensors: collections.deque[tuple[float, Any]] = collections.deque()
    commands: collections.deque[tuple[float, JointCommand, np.ndarray]] = collections.deque()
    reference = np.full(3, np.nan)
    lin_err: list[float] = []
    yaw_err: list[float] = []
    fall_time: Optional[float] = None
    received = applied = published = step = seq = 0
    first_command: Optional[float] = None
    max_lag = 0.0
    n_steps = int(round(cfg.seconds / dt))
    t0 = time.monotonic()
    while step < n_steps and not link.quit:
        now = time.monotonic()
        for c, ref in link.receive():
            commands.append((now + cfg.command_latency_s, c, ref))
            received += 1
        while commands and commands[0][0] <= now:
            _, robot.command, ref = commands.popleft()
            if first_command is None:
                first_command = now - t0
            reference = ref
            applied += 1
        sim_now = t0 + step * dt
        max_lag = max(max_lag, now - sim_now)
        while step * dt <= now - t0 and step < n_steps:  # catch up with the wall clock
            robot.step()
            step += 1
            if step % publish_every == 0:
                stamp = t0 + step * dt
                seq += 1
                sensors.append((stamp + cfg.sensor_latency_s, link.encode(seq, robot.sample(stamp))))
            if step % score_every == 0 and fall_time is None:
                if robot.fallen():
                    fall_time = step * dt
                elif (first_command is not None and step * dt >= first_command + cfg.score_from_s
                      and np.isfinite(reference).all()):
                    lin, ang, _ = robot.truth()
                    lin_err.append(float(np.linalg.norm(reference[:2] - lin[:2])))
                    yaw_err.append(float(abs(reference[2] - ang[2])))
        now = time.monotonic()
        while sensors and sensors[0][0] <= now:
            if link.send(sensors.popleft()[1]):
                published += 1
        pause = t0 + step * dt - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    xy = robot.data.qpos[robot.bq:robot.bq + 2] - robot.start
    return {"fell": fall_time is not None, "fall_time_s": fall_time,
            "lin_vel_tracking_error": float(np.mean(lin_err)) if lin_err else None,
            "yaw_rate_tracking_error": float(np.mean(yaw_err)) if yaw_err else None,
            "distance_m": float(np.hypot(*xy)), "forward_m": float(xy[0]), "sim_seconds": step * dt,
            "physics_dt": dt, "commands_received": received, "commands_applied": applied, "states_sent": published,
            "max_lag_ms": 1e3 * max_lag, "first_command_s": first_command}


def main() -> None:
    cfg = SimRobotConfig.from_json(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    robot = SimulatedRobot(cfg)  # a bad config fails before READY
    if cfg.rt_priority:
        realtime(cfg.rt_priority)
    print(f"READY {sock.getsockname()[1]}", flush=True)
    print(json.dumps(serve(robot, UdpLink(sock))), flush=True)


if __name__ == "__main__":
    main()
