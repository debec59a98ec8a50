"""What ``play.py`` attaches to an evaluation: a video of one env, a gait plot, or MuJoCo's interactive viewer.

Each factory returns ``(on_step, finish)``: ``on_step(t)`` runs after every env step of the evaluation and
``finish()`` once after it. They read the env's state and never change it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rl_core.env_api import SimulatedRobot
from rl_core.errors import UserError

Callbacks = tuple[Callable[[int], None], Callable[[], None]]


def locomotion_video(env: SimulatedRobot, path: str, index: int, seconds: float) -> Callbacks:
    """An MP4 following robot ``index`` with its command and velocity captioned, and a gait plot (PNG) next to it."""
    from envs.video import VideoRecorder, save_gait_plot

    steps = int(seconds / env.dt)
    videos: list[VideoRecorder] = []  # made at the first frame, when the robot stands where it is filmed
    contacts, commands, velocities = [], [], []

    def on_step(t: int) -> None:
        if t >= steps:
            return
        if not videos:
            videos.append(VideoRecorder(env.render_model(index), camera=env.robot.camera))
        video = videos[0]
        r = env.physics.read()
        k = env.kinematics(r)
        cmd = env.commands[index].cpu().numpy()
        vel = np.concatenate([k["lin_vel_b"][index, :2].cpu().numpy(), k["ang_vel_b"][index, 2:].cpu().numpy()])
        caption = (f"env {index}  t {t * env.dt:5.2f} s\n"
                   f"command  vx {cmd[0]:+.2f}  vy {cmd[1]:+.2f} m/s  yaw {cmd[2]:+.2f} rad/s\n"
                   f"actual   vx {vel[0]:+.2f}  vy {vel[1]:+.2f} m/s  yaw {vel[2]:+.2f} rad/s")
        video.add(r.qpos[index].double().cpu().numpy(), caption)
        contacts.append(env.last_contacts[index].cpu().numpy())
        commands.append(cmd)
        velocities.append(vel)

    def finish() -> None:
        if not videos:
            raise UserError(f"--video={path}: no step was filmed (the evaluation ended before its first step)")
        out = videos[0].save(path, fps=1.0 / env.dt)
        videos[0].close()
        plot = save_gait_plot(np.array(contacts), env.dt, env.robot.foot_names, np.array(commands), np.array(velocities),
                              Path(path).with_suffix(".png"))
        print(f"wrote {out} and {plot}")

    return on_step, finish


def gym_video(env: Any, path: str, index: int, seconds: float) -> Callbacks:
    """An MP4 of Gymnasium env ``index`` from its own ``rgb_array`` rendering, one frame per step, in real time."""
    from envs.video import write_mp4

    fps = env.steps_per_second()
    steps = int(seconds * fps)
    frames: list[np.ndarray] = []

    def on_step(t: int) -> None:
        if t < steps:
            frames.append(np.asarray(env.render_frames()[index]))

    def finish() -> None:
        print(f"wrote {write_mp4(path, frames, fps)}")

    return on_step, finish


def viewer(env: SimulatedRobot, index: int) -> Callbacks:
    """MuJoCo's interactive viewer showing robot ``index`` in real time (needs a display)."""
    import mujoco
    import mujoco.viewer

    data = mujoco.MjData(env.model)
    handle = mujoco.viewer.launch_passive(env.model, data)
    with handle.lock():  # follow the robot
        handle.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        handle.cam.trackbodyid = env.robot.base_body_id
        handle.cam.distance = 1.5
    clock = [time.perf_counter()]

    def on_step(t: int) -> None:
        if not handle.is_running():
            return
        data.qpos[:] = env.physics.read().qpos[index].double().cpu().numpy()
        mujoco.mj_forward(env.model, data)
        handle.sync()
        clock[0] += env.dt
        time.sleep(max(0.0, clock[0] - time.perf_counter()))

    return on_step, handle.close
