"""Evaluate a trained checkpoint with the deterministic policy.

    python play.py --checkpoint runs/CartPole-v1/<run>            # newest checkpoint of the run
    python play.py --checkpoint runs/CartPole-v1/<run>/checkpoints/model_391.pt --episodes 20 --json eval.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rl_core.errors import UserError, run_reporting_errors


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Evaluate a checkpoint (deterministic policy, frozen normalizer).")
    p.add_argument("--checkpoint", required=True, help="checkpoint file or run folder (newest checkpoint)")
    p.add_argument("--task", help="task (default: the checkpoint's)")
    p.add_argument("--episodes", type=int, default=10, help="episodes to evaluate (default 10)")
    p.add_argument("--num-envs", type=int, help="parallel envs (default: min(episodes, the run's num_envs))")
    p.add_argument("--seed", type=int, default=12345, help="seed of the evaluation episodes")
    p.add_argument("--json", help="write the metrics to this file")
    p.add_argument("--video", help="write an MP4 of one robot (locomotion tasks) and a gait plot (PNG) next to it")
    p.add_argument("--video-env", type=int, default=0, help="which env to film (default 0)")
    p.add_argument("--video-seconds", type=float, default=10.0, help="length of the video (default 10 s)")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    args = p.parse_args(argv)
    if args.video and not os.environ.get("DISPLAY"):
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering; must be set before mujoco is imported
    return run_reporting_errors(lambda: play(args), args.debug)


def play(args: argparse.Namespace) -> int:
    import dataclasses

    import torch

    from envs.registry import get_task
    from rl_core import checkpoint as ckpt
    from rl_core.config_io import from_dict
    from rl_core.evaluation import evaluate
    from rl_core.modules.actor_critic import ActorCritic

    if args.episodes < 1:
        raise UserError(f"--episodes={args.episodes} is not allowed; expected an integer >= 1")
    path = ckpt.resolve_path(args.checkpoint)
    data = ckpt.load(path)
    task = args.task or data["task"]
    spec = get_task(task)
    cfg = from_dict(spec.default_config(), data["config"])
    num_envs = args.num_envs or min(args.episodes, cfg.env.num_envs)
    if num_envs < 1:
        raise UserError(f"--num-envs={num_envs} is not allowed; expected an integer >= 1")
    env = spec.make_env(dataclasses.replace(cfg.env, num_envs=num_envs).for_evaluation(), torch.device("cpu"))
    try:
        ckpt.check_compatible(data, task, env, str(path))
        policy = ActorCritic(env.obs_dims["policy"], env.obs_dims.get("critic"), env.action_spec, cfg.policy)
        policy.load_state_dict(data["policy"])
        policy.eval()
        on_step, finish = _recorder(env, args) if args.video else (None, None)
        metrics = evaluate(policy, env, args.episodes, args.seed, on_step=on_step)
        if finish is not None:
            finish()
    finally:
        env.close()
    metrics = {"task": task, "checkpoint": str(path), "iteration": data["iteration"], **metrics}
    print(f"{task} @ iteration {metrics['iteration']}: {metrics['episodes']} episodes")
    for name, value in metrics.items():
        if isinstance(value, float):
            print(f"  {name:24s} {value:10.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps(metrics, indent=2) + "\n")
    return 0


def _recorder(env, args: argparse.Namespace):
    """Callbacks that film env ``--video-env`` for ``--video-seconds`` and plot its velocities and foot contacts."""
    if not hasattr(env, "physics"):
        raise UserError("--video is available for the MuJoCo locomotion tasks (e.g. quadruped-flat)")
    if not 0 <= args.video_env < env.num_envs:
        raise UserError(f"--video-env={args.video_env} is not allowed; expected 0..{env.num_envs - 1}")
    import numpy as np

    from envs.robots import quadruped as robot
    from envs.video import VideoRecorder, save_gait_plot

    i, steps = args.video_env, int(args.video_seconds / env.dt)
    video = VideoRecorder(env.model)
    contacts, commands, velocities = [], [], []

    def on_step(t: int) -> None:
        if t >= steps:
            return
        r = env.physics.read()
        k = env.kinematics(r)
        video.add(r.qpos[i].double().cpu().numpy())
        contacts.append(env.last_contacts[i].cpu().numpy())
        commands.append(env.commands[i].cpu().numpy())
        velocities.append(np.concatenate([k["lin_vel_b"][i, :2].cpu().numpy(), k["ang_vel_b"][i, 2:].cpu().numpy()]))

    def finish() -> None:
        path = video.save(args.video, fps=1.0 / env.dt)
        video.close()
        plot = save_gait_plot(np.array(contacts), env.dt, robot.LEGS, np.array(commands), np.array(velocities),
                              Path(args.video).with_suffix(".png"))
        print(f"wrote {path} and {plot}")

    return on_step, finish


if __name__ == "__main__":
    sys.exit(main())
