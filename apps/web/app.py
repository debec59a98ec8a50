"""``play.py --web``: the page (viser: 3D scene, controls, plots) and its real-time loop over a ``Session``.

GUI callbacks run on viser's threads: they only queue work (``self._todo``), which the loop runs between two
control steps, so the simulation has one owner. The loop paces the steps to real time (``env.dt``), sends the
robots' poses every step, the numbers and plots at ``PANEL_HZ``, and idles while no page is open.
"""

from __future__ import annotations

import contextlib
import io
import queue
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from apps.web.scene import RobotScene, spread
from apps.web.session import Session, Tick, checkpoints
from contract.errors import UserError
from envs.terrain.config import TILE_TYPES

PANEL_HZ = 5.0
"""Updates per second of the page's numbers and plots."""
PLOT_SECONDS = 10.0
"""Time window of the plots (s)."""
MEASURED_WINDOW_S = 1.0
"""The shown measured velocity is the mean over this many seconds (a trotting base's speed oscillates)."""
POLL_S = 2.0
"""How often "follow newest" looks for a new checkpoint in the run folder (s)."""
CAMERA_TARGET = np.array([0.0, 0.0, 0.3])
"""Where a new page's camera looks (m): the followed robot is drawn at the origin."""
CAMERA_OFFSET = np.array([-1.6, -1.6, 1.0])
"""Where a new page's camera starts, relative to ``CAMERA_TARGET`` (m)."""
SPACING = 1.5
"""Distance (m) between the robots' start points on a plane (each robot has a plane of its own)."""
AS_TRAINED = "as trained"
"""Terrain choice: the run's own ground (no tile type forced)."""


@dataclass(frozen=True)
class WebOptions:
    """Where to serve and what to show."""

    host: str
    """Interface to bind (127.0.0.1 unless the user says otherwise)."""
    port: int
    """TCP port of the page and its websocket."""
    follow: int
    """Index of the robot the camera follows at the start."""


def check_port(host: str, port: int) -> None:
    """One line if ``host:port`` cannot be bound (busy, not an address of this machine, out of range)."""
    if not 1 <= port <= 65535:
        raise UserError(f"--port={port} is not allowed; expected an integer in [1, 65535]")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise UserError(f"--host={host} is not allowed: {e.strerror}") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: a closed one's TIME_WAIT is fine
        try:
            s.bind(address)
        except OSError as e:
            raise UserError(f"--port={port} on {host} is not available ({e.strerror}); "
                            "choose another with --port") from None


def _set(handle: Any, value: object) -> None:
    """Show ``value`` in a GUI control (viser's ``value`` setter; its stubs declare the property read-only)."""
    handle.value = value


def require_viser() -> None:
    import importlib.util

    if importlib.util.find_spec("viser") is None:
        raise UserError("--web needs the viser package: pip install -e \".[web]\"")


class WebViewer:
    """The page of one ``Session``; ``serve()`` runs until Ctrl-C."""

    def __init__(self, session: Session, options: WebOptions, run_folder: Path):
        import viser

        self.session, self.options, self.run_folder = session, options, run_folder
        self._todo: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        with contextlib.redirect_stdout(io.StringIO()):  # viser's banner; play.py prints the URL when ready
            server = viser.ViserServer(host=options.host, port=options.port, verbose=False)
        if server.get_port() != options.port:  # viser moves on to the next free port; we say so instead
            server.stop()
            raise UserError(f"--port={options.port} on {options.host} is not available; choose another with --port")
        server.request_share_url = lambda verbose=True: None  # type: ignore[method-assign]  # never tunnel out
        self.server = server
        server.gui.configure_theme(show_share_button=False, show_logo=False, control_width="medium")
        server.scene.set_up_direction("+z")
        # Plain lights, no environment map (its prefiltering) and no shadows: a browser without a GPU (software
        # WebGL) then shows the first frame about twice as fast
        # (tools/experiments/web_viewer_bench.py: 20 s -> 8-11 s at load 11).
        server.scene.configure_environment_map(None)
        server.scene.configure_default_lights(cast_shadow=False)
        self.session.followed = min(options.follow, session.num_envs - 1)
        self.scene = self._make_scene()
        self.paused = False
        self.single_steps = 0
        self.follow_newest = False
        self.camera_follows = True
        self.updates = 0
        self._history: deque[Tick] = deque(maxlen=int(PLOT_SECONDS / session.env.dt))
        self._gui()
        self._move_camera()
        self.scene.update(session.qpos())
        server.initial_camera.look_at = CAMERA_TARGET
        server.initial_camera.position = CAMERA_TARGET + CAMERA_OFFSET

    # ------------------------------------------------------------------------------------ page
    def _gui(self) -> None:
        import viser.uplot as up

        gui, s = self.server.gui, self.session
        gui.add_markdown(f"**{s.run.data['task']}** · {s.num_envs} robots")
        c = s.cfg.commands
        with gui.add_folder("Commands"):
            self.random = gui.add_checkbox("Random commands", False, hint="the task's own random commands")
            lo_x, hi_x = min(c.lin_vel_x[0], -1.0), max(c.lin_vel_x[1], 1.0)
            self.vx = gui.add_slider("Forward (m/s)", lo_x, hi_x, 0.05, min(0.5, hi_x))
            self.vy = gui.add_slider("Sideways (m/s)", min(c.lin_vel_y[0], -1.0), max(c.lin_vel_y[1], 1.0), 0.05, 0.0)
            self.yaw = gui.add_slider("Yaw rate (rad/s)", min(c.yaw_rate[0], -1.0), max(c.yaw_rate[1], 1.0), 0.05, 0.0,
                                      disabled=s.heading)
            self.heading = gui.add_slider("Heading (rad)", -3.14, 3.14, 0.05, 0.0, visible=s.heading)
            self.cmd_vx = gui.add_number("Commanded vx", 0.0, step=0.01, disabled=True)
            self.meas_vx = gui.add_number("Measured vx", 0.0, step=0.01, disabled=True,
                                          hint=f"followed robot, mean over {MEASURED_WINDOW_S:g} s")
            self.meas_yaw = gui.add_number("Measured yaw rate", 0.0, step=0.01, disabled=True)
        for h in (self.random, self.vx, self.vy, self.yaw, self.heading):
            h.on_update(lambda _: self._todo.put(self._apply_commands))
        with gui.add_folder("Simulation"):
            self.pause = gui.add_checkbox("Pause", False)
            self.pause.on_update(lambda _: setattr(self, "paused", self.pause.value))
            step = gui.add_button("Single step")
            step.on_click(lambda _: setattr(self, "single_steps", self.single_steps + 1))
            reset = gui.add_button("Reset")
            reset.on_click(lambda _: self._todo.put(self._reset))
            push = gui.add_button("Push")
            push.on_click(lambda _: self._todo.put(self.session.push))
            self.follow = gui.add_slider("Follow robot", 0, max(1, s.num_envs - 1), 1, s.followed,
                                         disabled=s.num_envs == 1)
            self.follow.on_update(lambda _: self._todo.put(self._follow))
            cam = gui.add_checkbox("Camera follows", True)
            cam.on_update(lambda _: setattr(self, "camera_follows", cam.value))
            self.show = gui.add_checkbox("Show robots", True)
            self.show.on_update(lambda _: self._todo.put(self._show))
            self.rate = gui.add_number("Updates/s", 0.0, step=0.01, disabled=True)
        if s.base_cfg.terrain.type == "generated":
            with gui.add_folder("Terrain"):
                self.tile = gui.add_dropdown("Tile type", (AS_TRAINED, *TILE_TYPES), initial_value=AS_TRAINED)
                self.level = gui.add_slider("Level", 0, s.base_cfg.terrain.levels - 1, 1,
                                            min(5, s.base_cfg.terrain.levels - 1))
                for control in (self.tile, self.level):
                    control.on_update(lambda _: self._todo.put(self._terrain))
        with gui.add_folder("Checkpoint"):
            names = self._checkpoint_names()
            current = Path(s.run.path).name
            self.ckpt = gui.add_dropdown("Checkpoint", names or (current,),
                                         initial_value=current if current in names else (names or [current])[-1])
            self.ckpt.on_update(lambda _: self._todo.put(self._pick_checkpoint))
            newest = gui.add_checkbox("Follow newest", False, hint=f"load each new checkpoint of the run folder "
                                                                   f"(checked every {POLL_S:g} s)")
            newest.on_update(lambda _: setattr(self, "follow_newest", newest.value))
            self.loaded = gui.add_text("Loaded", s.describe(), disabled=True)
        with gui.add_folder("Plots"):
            empty = np.zeros(1)
            self.err_plot = gui.add_uplot(
                (empty, empty, empty),
                (up.Series(label="t (s)"), up.Series(label="lin vel error", stroke="#d9480f", width=2),
                 up.Series(label="yaw rate error", stroke="#1971c2", width=2)),
                title="Tracking errors, followed robot", aspect=1.6)
            self.terms = list(self.session.step_terms())
            palette = ("#e03131", "#2f9e44", "#1971c2", "#f08c00", "#9c36b5", "#0c8599", "#5c940d", "#d6336c",
                       "#495057", "#3b5bdb", "#e8590c", "#087f5b", "#862e9c", "#a61e4d", "#364fc7", "#2b8a3e")
            self.reward_plot = gui.add_uplot(
                (empty, *(empty for _ in self.terms)),
                (up.Series(label="t (s)"), *(up.Series(label=name, stroke=palette[j % len(palette)], width=1.5)
                                              for j, name in enumerate(self.terms))),
                title="Reward terms (batch mean per step)", aspect=1.0)

    def _make_scene(self) -> RobotScene:
        s = self.session
        on_plane = s.env.terrain is None  # every robot starts at the origin of its own plane
        offsets = spread(s.num_envs, SPACING) if on_plane else np.zeros((s.num_envs, 3))
        scene = RobotScene(self.server, s.env.model, s.num_envs, offsets)
        scene.follow(s.followed)
        return scene

    def _base(self) -> np.ndarray:
        """Where the followed robot's base is drawn."""
        return self.session.base_position() + self.scene.offsets[self.session.followed]

    def _checkpoint_names(self) -> list[str]:
        return [p.name for p in checkpoints(self.run_folder)]

    def _notify(self, title: str, body: str, error: bool = False) -> None:
        for client in self.server.get_clients().values():
            client.add_notification(title, body, auto_close_seconds=6.0, color="red" if error else "green")

    # ------------------------------------------------------------------------------------ queued actions
    def _apply_commands(self) -> None:
        if self.random.value:
            self.session.hold(None)
        else:
            self.session.hold((float(self.vx.value), float(self.vy.value), float(self.yaw.value),
                               float(self.heading.value)))

    def _reset(self) -> None:
        self.session.reset()
        self._history.clear()

    def _follow(self) -> None:
        self.session.followed = min(int(self.follow.value), self.session.num_envs - 1)
        self.scene.follow(self.session.followed)
        self._history.clear()

    def _show(self) -> None:
        for part in self.scene.parts:
            part.handle.visible = self.show.value  # type: ignore[attr-defined]

    def _terrain(self) -> None:
        tile = None if self.tile.value == AS_TRAINED else str(self.tile.value)
        self.session.set_terrain(tile, int(self.level.value))
        self.scene.remove()
        self.scene = self._make_scene()
        self.yaw.disabled = self.session.heading  # the terrain evaluation drives straight ahead, no heading
        self.heading.visible = self.session.heading
        self._show()
        self._history.clear()
        self._move_camera()

    def _pick_checkpoint(self) -> None:
        path = self._folder() / str(self.ckpt.value)
        if Path(self.session.run.path).resolve() == path.resolve():
            return
        self._load(path)

    def _folder(self) -> Path:
        return self.run_folder / "checkpoints" if (self.run_folder / "checkpoints").is_dir() else self.run_folder

    def _load(self, path: Path) -> None:
        try:
            text = self.session.load(path)
        except UserError as e:
            print(f"warning: {e}", flush=True)
            self._notify("Checkpoint not loaded", str(e), error=True)
            return
        _set(self.loaded, text)
        print(f"web viewer: loaded {text}", flush=True)
        self._notify("Checkpoint loaded", text)

    def _poll_checkpoints(self) -> None:
        names = self._checkpoint_names()
        if names and tuple(names) != tuple(self.ckpt.options):
            self.ckpt.options = names
        if self.follow_newest and names and names[-1] != Path(self.session.run.path).name:
            _set(self.ckpt, names[-1])  # its callback queues the load
            self._load(self._folder() / names[-1])

    # ------------------------------------------------------------------------------------ camera
    def _move_camera(self) -> None:
        """Keep the followed robot where the page's orbit camera looks (the scene moves, not the camera)."""
        base = self._base()
        self.scene.show_terrain_near(base[:2])
        if self.camera_follows:
            self.scene.center_on(base)

    # ------------------------------------------------------------------------------------ loop
    def _panel(self) -> None:
        h = list(self._history)
        if not h:
            return
        last = h[-1]
        window = h[-max(1, int(MEASURED_WINDOW_S / self.session.env.dt)):]
        _set(self.cmd_vx, round(last.command[0], 3))
        _set(self.meas_vx, round(float(np.mean([k.measured[0] for k in window])), 3))
        _set(self.meas_yaw, round(float(np.mean([k.measured[2] for k in window])), 3))
        t = np.array([k.t for k in h])
        self.err_plot.data = (t, np.array([k.lin_vel_error for k in h]), np.array([k.yaw_rate_error for k in h]))
        self.reward_plot.data = (t, *(np.array([k.rewards.get(name, 0.0) for k in h]) for name in self.terms))

    def serve(self) -> None:
        """Run until Ctrl-C (or ``stop_after`` seconds for tests); the server is stopped on the way out."""
        dt = float(self.session.env.dt)
        self._apply_commands()
        next_step = time.perf_counter()
        next_panel = next_poll = rate_start = next_step
        rate_count = 0
        try:
            while True:
                while not self._todo.empty():
                    self._todo.get()()
                now = time.perf_counter()
                if not self.server.get_clients():  # nobody watching: no CPU spent
                    time.sleep(0.1)
                    next_step = time.perf_counter()
                    continue
                if not self.paused or self.single_steps > 0:
                    self.single_steps = max(0, self.single_steps - 1)
                    self._history.append(self.session.step())
                self.scene.update(self.session.qpos())
                self._move_camera()
                self.updates += 1
                rate_count += 1
                if now >= next_panel:
                    self._panel()
                    next_panel = now + 1.0 / PANEL_HZ
                    if now - rate_start >= 1.0:
                        _set(self.rate, round(rate_count / (now - rate_start), 1))
                        rate_start, rate_count = now, 0
                if now >= next_poll:
                    self._poll_checkpoints()
                    next_poll = now + POLL_S
                next_step += dt
                lag = next_step - time.perf_counter()
                if lag > 0:
                    time.sleep(lag)
                elif lag < -0.25:  # too slow for real time: drop the backlog instead of racing to catch up
                    next_step = time.perf_counter()
        finally:
            self.server.stop()
