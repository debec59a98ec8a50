"""What ``play.py`` attaches to an evaluation: a video of one env (a gait plot for legged robots), or MuJoCo's
interactive viewer.

Each factory returns ``(on_step, finish)``: ``on_step(t)`` runs after every env step of the evaluation and
``finish()`` once after it. They read the env's state and never change it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from contract.errors import UserError

Callbacks = tuple[Callable[[int], None], Callable[[], None]]


@runtime_checkable
class Filmable(Protocol):
    """A batched MuJoCo simulation play.py can film or show (``envs/tasks/base.py``'s ``MujocoTask``); read only."""

    physics: Any
    """The physics backend (``read()`` gives qpos / qvel / sensordata of every env)."""
    model: Any
    """The compiled MuJoCo model that is simulated."""
    dt: float
    """Control period (s)."""
    camera: str | None
    """The camera a video films through (None: the renderer's free camera)."""
    track_body: int
    """The body the interactive viewer follows."""

    def render_model(self, index: int) -> Any:
        """The model to film env ``index`` with from now on: ``model``, or one with the same joints and a lighter
        floor around the robot (a large heightfield takes a software renderer seconds per frame)."""
        ...

    def caption(self, index: int) -> str:
        """What a video frame of env ``index`` says under its time (the command and what the robot does)."""
        ...


@runtime_checkable
class Gaited(Protocol):
    """A legged robot's task: its feet's contacts, commands and velocities give a gait plot next to the video."""

    robot: Any
    """The resolved robot (its ``foot_names``)."""
    commands: Any
    """Current commands ``[N, 3]``."""
    last_contacts: Any
    """Feet on the ground ``[N, feet]`` bool."""

    def measured(self, index: int) -> np.ndarray:
        """Env ``index``'s base velocity as commanded: (vx, vy, yaw rate)."""
        ...


@runtime_checkable
class Ghosted(Protocol):
    """A task with a reference motion, drawn as a ghost over the robot in a video (tracking)."""

    def reference_qpos(self, index: int) -> np.ndarray:
        """The reference's generalized positions for env ``index`` now (the simulated model's layout)."""
        ...


def mujoco_video(env: Filmable, path: str, index: int, seconds: float, quality: str = "auto") -> Callbacks:
    """An MP4 following env ``index`` with the task's caption; for a legged robot a gait plot (PNG) next to it; for
    a task with a reference motion the reference as a translucent ghost; drawn at ``quality``
    (``apps/render_cost.py``: a mesh-heavy robot without shadows and reflections, said in one line)."""
    from apps.video import VideoRecorder, save_gait_plot

    steps = int(seconds / env.dt)
    videos: list[VideoRecorder] = []  # made at the first frame, when the robot stands where it is filmed
    gait = env if isinstance(env, Gaited) else None
    reference = env if isinstance(env, Ghosted) else None
    contacts, commands, velocities = [], [], []

    def on_step(t: int) -> None:
        if t >= steps:
            return
        if not videos:
            videos.append(VideoRecorder(env.render_model(index), camera=env.camera, quality=quality))
        r = env.physics.read()
        caption = f"env {index}  t {t * env.dt:5.2f} s\n" + env.caption(index)
        ghost = reference.reference_qpos(index) if reference is not None else None
        first = videos[0].choice is None
        videos[0].add(r.qpos[index].double().cpu().numpy(), caption, ghost)
        if first and videos[0].choice is not None and videos[0].choice.line:
            print(videos[0].choice.line)
        if gait is not None:
            contacts.append(gait.last_contacts[index].cpu().numpy())
            commands.append(gait.commands[index].cpu().numpy())
            velocities.append(gait.measured(index))

    def finish() -> None:
        if not videos:
            raise UserError(f"--video={path}: no step was filmed (the evaluation ended before its first step)")
        out = videos[0].save(path, fps=1.0 / env.dt)
        videos[0].close()
        if gait is None:
            print(f"wrote {out}")
            return
        plot = save_gait_plot(np.array(contacts), env.dt, gait.robot.foot_names, np.array(commands),
                              np.array(velocities), Path(path).with_suffix(".png"))
        print(f"wrote {out} and {plot}")

    return on_step, finish


def gym_video(env: Any, path: str, index: int, seconds: float) -> Callbacks:
    """An MP4 of Gymnasium env ``index`` from its own ``rgb_array`` rendering, one frame per step, in real time."""
    from apps.video import write_mp4

    fps = env.steps_per_second()
    steps = int(seconds * fps)
    frames: list[np.ndarray] = []

    def on_step(t: int) -> None:
        if t < steps:
            frames.append(np.asarray(env.render_frames()[index]))

    def finish() -> None:
        print(f"wrote {write_mp4(path, frames, fps)}")

    return on_step, finish


def viewer(env: Filmable, index: int) -> Callbacks:
    """MuJoCo's interactive viewer showing robot ``index`` in real time (needs a display)."""
    import mujoco
    import mujoco.viewer

    data = mujoco.MjData(env.model)
    handle = mujoco.viewer.launch_passive(env.model, data)
    with handle.lock():  # follow the robot
        handle.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        handle.cam.trackbodyid = env.track_body
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


@runtime_checkable
class Recordable(Protocol):
    """A batched MuJoCo task whose robot has a floating base, recordable as a motion clip (``MujocoTask``)."""

    physics: Any
    model: Any
    dt: float
    state: Any
    """Per-env task state; its ``episode_length`` tells when an env's episode restarted."""


def motion_recording(env: Recordable, path: str, index: int, seconds: float) -> Callbacks:
    """A motion clip (``contract/motion.py``) of env ``index``'s robot: its base pose and every hinge / slide joint
    after each step, at the control rate, for ``seconds`` or until that env's first episode ends."""
    import mujoco

    from contract import motion

    model = env.model
    kinds = [int(k) for k in model.jnt_type]
    free = [j for j, k in enumerate(kinds) if k == mujoco.mjtJoint.mjJNT_FREE]
    if len(free) != 1:
        raise UserError(f"--record-motion={path}: the task's robot has no floating base (free joint) to record")
    moving = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    joints = [j for j, k in enumerate(kinds) if k in moving]
    base = int(model.jnt_qposadr[free[0]])
    adr = [int(model.jnt_qposadr[j]) for j in joints]
    steps = int(seconds / env.dt)
    rows: list[np.ndarray] = []
    going = [True]

    def on_step(t: int) -> None:
        if not going[0] or t >= steps:
            return
        if int(env.state.episode_length[index]) != t + 1:  # the episode ended (and restarted) at this step
            going[0] = False
            return
        rows.append(env.physics.read().qpos[index].double().cpu().numpy().copy())

    def finish() -> None:
        if len(rows) < 2:
            raise UserError(f"--record-motion={path}: env {index}'s episode ended after {len(rows)} step(s); "
                            "nothing to record")
        q = np.stack(rows)
        clip = motion.Clip(1.0 / env.dt, tuple(model.joint(j).name for j in joints), q[:, base:base + 3],
                           q[:, base + 3:base + 7], q[:, adr], Path(path).stem)
        motion.save(motion.checked(clip, f"--record-motion={path}"), path)
        print(f"wrote {path}: {clip.frames} frames at {clip.fps:g} fps ({clip.duration:.2f} s) of env {index}, "
              f"{len(joints)} joints")

    return on_step, finish


def combined(*pairs: tuple[Callable[[int], None] | None, Callable[[], None] | None]) -> Callbacks | tuple[None, None]:
    """One (on_step, finish) pair running each given pair's in turn (None, None: none given)."""
    chosen = [(s, f) for s, f in pairs if s is not None]
    if not chosen:
        return None, None

    def on_step(t: int) -> None:
        for s, _ in chosen:
            s(t)

    def finish() -> None:
        for _, f in chosen:
            if f is not None:
                f()

    return on_step, finish
