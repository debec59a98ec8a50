"""Seconds per video frame of tasks' scenes, drawn full and light (``apps/render_cost.py``), as play.py films them.

    MUJOCO_GL=egl python -m tools.experiments.render_cost --task quadruped-flat --task humanoid-flat \\
        --task /tmp/heavy/my_robot/my_robot.py:flat          # python -m tests.mesh_heavy_robot /tmp/heavy

For each task: one env is built (native MuJoCo), reset, and its robot filmed as ``play.py --video`` does
(640 x 480, the task's camera, the model ``render_model`` gives); ``--frames`` frames are timed each way after
one untimed frame. Prints the mesh triangles, seconds per frame full and light, and what ``auto`` chooses.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any


def frame_costs(task: str, frames: int) -> tuple[int, float, float]:
    """(mesh triangles, seconds per full frame, seconds per light frame) of ``task``'s filmed scene."""
    import dataclasses

    import mujoco
    import torch

    from apps.render_cost import mesh_faces, set_light
    from configs.catalog import get_task

    spec = get_task(task)
    cfg = spec.default_config()
    env_cfg: Any = cfg.env
    env: Any = spec.make_env(dataclasses.replace(env_cfg, num_envs=1, backend="native"), torch.device("cpu"))
    env.reset(seed=0)
    model = env.render_model(0)
    data = mujoco.MjData(model)
    data.qpos[:] = env.physics.read().qpos[0].double().numpy()
    mujoco.mj_forward(model, data)
    renderer = mujoco.Renderer(model, 480, 640)
    renderer.update_scene(data, camera=-1 if env.camera is None else env.camera)
    out = []
    for light in (False, True):
        set_light(renderer.scene, light)
        renderer.render()
        start = time.perf_counter()
        for _ in range(frames):
            renderer.render()
        out.append((time.perf_counter() - start) / frames)
    renderer.close()
    return mesh_faces(model), out[0], out[1]


def main() -> None:
    os.environ.setdefault("MUJOCO_GL", "egl")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", required=True, help="a task name or FILE.py:NAME (repeatable)")
    parser.add_argument("--frames", type=int, default=5, help="frames timed each way (default 5)")
    args = parser.parse_args()
    from apps.render_cost import FRAME_BUDGET_S

    print(f"| task | mesh triangles | full (s / frame) | light (s / frame) | auto (budget {FRAME_BUDGET_S:g} s) |")
    print("|---|---|---|---|---|")
    for task in args.task:
        faces, full, light = frame_costs(task, args.frames)
        print(f"| {task} | {faces:,} | {full:.3f} | {light:.3f} | {'light' if full > FRAME_BUDGET_S else 'full'} |")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
