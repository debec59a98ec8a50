"""Offscreen video of one simulated robot and a foot-contact (gait) diagram, for ``play.py``.

Rendering only needs the generalized positions: they are copied into a private ``MjData`` and drawn with
``mujoco.Renderer``, so this works the same for every physics backend. Headless machines need
``MUJOCO_GL=egl`` (or ``osmesa``); ``play.py`` sets egl when no display is present.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from apps.render_cost import Choice, choose

GHOST_RGBA = (0.2, 0.85, 0.3, 0.35)
"""Colour of a reference motion's ghost in a video."""


class VideoRecorder:
    """Collects frames of ``model`` posed at given ``qpos``, seen from ``camera``; writes an MP4."""

    def __init__(self, model: mujoco.MjModel, width: int = 640, height: int = 480, camera: str | None = "track",
                 quality: str = "auto"):
        self.model = model
        self.quality = quality
        """``apps/render_cost.QUALITIES``: shadows and reflections kept (full), off (light), or off when a frame
        of this scene costs more than the budget to draw (auto, decided at the first frame)."""
        self.choice: Choice | None = None
        """How the frames are drawn (set at the first frame)."""
        self.data = mujoco.MjData(model)
        self.renderer = mujoco.Renderer(model, height, width)
        self.camera = camera
        self.frames: list[np.ndarray] = []
        self._ghost: mujoco.MjData | None = None

    def add(self, qpos: np.ndarray, caption: str = "", ghost: np.ndarray | None = None) -> None:
        """Render the model at ``qpos``; ``caption`` is written in the top-left corner; ``ghost``: the same robot at
        these generalized positions drawn translucent over it (a reference motion)."""
        self.data.qpos[:] = qpos
        mujoco.mj_forward(self.model, self.data)
        self.renderer.update_scene(self.data, camera=-1 if self.camera is None else self.camera)
        if ghost is not None:
            self._add_ghost(ghost)
        if self.choice is None:
            self.choice = choose(self.quality, self.model, self.renderer.scene, self.renderer.render)
        frame = self.renderer.render().copy()
        self.frames.append(add_caption(frame, caption) if caption else frame)

    def _add_ghost(self, qpos: np.ndarray) -> None:
        """The robot's moving geoms at ``qpos``, added to the scene in a translucent green."""
        if self._ghost is None:
            self._ghost = mujoco.MjData(self.model)
        self._ghost.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, self._ghost)
        scene = self.renderer.scene
        first = scene.ngeom
        mujoco.mjv_addGeoms(self.model, self._ghost, mujoco.MjvOption(), mujoco.MjvPerturb(),
                            int(mujoco.mjtCatBit.mjCAT_DYNAMIC), scene)
        for i in range(first, scene.ngeom):
            scene.geoms[i].rgba[:] = GHOST_RGBA

    def save(self, path: str | Path, fps: float) -> Path:
        return write_mp4(path, self.frames, fps)

    def close(self) -> None:
        self.renderer.close()


def add_caption(frame: np.ndarray, text: str) -> np.ndarray:
    """``frame`` with ``text`` drawn on a dark band at the top (Pillow comes with matplotlib)."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(frame)
    draw = ImageDraw.Draw(image)
    lines = text.count("\n") + 1
    draw.rectangle((0, 0, image.width, 6 + 13 * lines), fill=(0, 0, 0))
    draw.multiline_text((6, 3), text, fill=(255, 255, 255), spacing=3)
    return np.asarray(image)


def write_mp4(path: str | Path, frames: list[np.ndarray], fps: float) -> Path:
    """Encode ``frames`` (H x W x 3 uint8) as an MP4 (imageio-ffmpeg)."""
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    imageio.mimwrite(path, list(frames), fps=fps, macro_block_size=1)
    return path


def save_gait_plot(contacts: np.ndarray, dt: float, feet: tuple[str, ...], commands: np.ndarray,
                   velocities: np.ndarray, path: str | Path) -> Path:
    """Two panels: commanded vs actual body velocity, and foot contacts over time (``contacts [T, feet]``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(len(contacts)) * dt
    fig, (ax_v, ax_g) = plt.subplots(2, 1, figsize=(9, 5), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    for j, (label, color) in enumerate((("vx (m/s)", "C0"), ("vy (m/s)", "C1"), ("yaw rate (rad/s)", "C2"))):
        ax_v.plot(t, commands[:, j], color=color, linestyle="--", linewidth=1)
        ax_v.plot(t, velocities[:, j], color=color, linewidth=1, label=label)
    ax_v.set_ylabel("command (--) / actual")
    ax_v.legend(loc="upper right", fontsize=8)
    for i in range(len(feet)):
        on = contacts[:, i].astype(bool)
        ax_g.fill_between(t, i - 0.4, i + 0.4, where=on, step="post", color="k")
    ax_g.set_yticks(range(len(feet)), feet)
    ax_g.set_xlabel("time (s)")
    ax_g.set_title("foot contacts (black: on the ground)", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
