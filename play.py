"""Evaluate a trained checkpoint, film it, export it for a robot, and check the export outside the trainer.

    python play.py --checkpoint runs/quadruped-flat/<run>                  # newest checkpoint, 10 episodes
    python play.py --checkpoint runs/quadruped-flat/<run> --video walk.mp4 --json eval.json
    python play.py --checkpoint runs/quadruped-flat/<run> --export-onnx policy.onnx --sim2sim policy.onnx
    python play.py --sim2sim policy.onnx --episodes 20                      # onnxruntime only, no checkpoint
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rl_core.errors import OneLineParser, UserError, run_reporting_errors


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(description="Evaluate a checkpoint (deterministic policy, frozen normalizer), "
                                            "record it, export it to ONNX / TorchScript, check an ONNX file.")
    p.add_argument("--checkpoint", help="checkpoint file or run folder (its newest checkpoint)")
    p.add_argument("--task", help="task (default: the checkpoint's)")
    p.add_argument("--episodes", type=int, default=10, help="episodes to evaluate (default 10; 0: export only)")
    p.add_argument("--num-envs", type=int, help="parallel envs (default: min(episodes, the run's num_envs))")
    p.add_argument("--seed", type=int, default=12345, help="seed of the evaluation episodes")
    p.add_argument("--backend", choices=("native", "mjx", "warp"),
                   help="physics backend (MuJoCo tasks; default: the run's, where auto means native on a CPU)")
    p.add_argument("--json", help="write the metrics to this file")
    p.add_argument("--video", help="write an MP4 of one env (locomotion: plus a gait plot PNG next to it)")
    p.add_argument("--video-env", type=int, default=0, help="which env to film or view (default 0)")
    p.add_argument("--video-seconds", type=float, default=10.0, help="length of the video (default 10 s)")
    p.add_argument("--viewer", action="store_true", help="watch in MuJoCo's interactive viewer (needs a display)")
    p.add_argument("--export-onnx", help="write the policy (normalizer + actor) to this ONNX file, checked")
    p.add_argument("--export-jit", help="write the policy to this TorchScript file, checked")
    p.add_argument("--sim2sim", help="run this exported ONNX file with onnxruntime in plain MuJoCo / Gymnasium")
    p.add_argument("--wandb", action="store_true",
                   help="log the metrics (and the --video) to the W&B run of the checkpoint's run folder")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    return p.parse_args(argv)


def validate(args: argparse.Namespace) -> None:
    """Every check that needs no file and no env, so bad input fails before anything is built."""
    if args.checkpoint is None and args.sim2sim is None:
        raise UserError("--checkpoint is required (or --sim2sim FILE.onnx alone to check an exported policy)")
    if args.episodes < 0 or (args.episodes == 0 and (args.sim2sim or args.video or args.viewer)):
        raise UserError(f"--episodes={args.episodes} is not allowed; expected an integer >= 1 "
                        "(0 only to export without evaluating)")
    if args.num_envs is not None and args.num_envs < 1:
        raise UserError(f"--num-envs={args.num_envs} is not allowed; expected an integer >= 1")
    if args.video_seconds <= 0:
        raise UserError(f"--video-seconds={args.video_seconds} is not allowed; expected a number > 0")
    if args.wandb:
        import importlib.util

        if importlib.util.find_spec("wandb") is None:
            raise UserError("--wandb needs the wandb package: pip install -e '.[wandb]'")
    if args.checkpoint is None:
        for flag in ("task", "num_envs", "backend", "video", "viewer", "export_onnx", "export_jit", "wandb"):
            if getattr(args, flag):
                raise UserError(f"--{flag.replace('_', '-')} needs --checkpoint (--sim2sim alone runs only the ONNX file)")
    for flag, suffix in (("video", ".mp4"), ("export_onnx", ".onnx"), ("json", ".json")):
        value = getattr(args, flag)
        if value and Path(value).suffix.lower() != suffix:
            raise UserError(f"--{flag.replace('_', '-')}={value} is not allowed; expected a file name ending in {suffix}")
    if args.viewer and not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        raise UserError("--viewer needs a display (DISPLAY is not set); use --video OUT.mp4 on a headless machine")
    if args.backend == "mjx":
        import importlib.util

        if importlib.util.find_spec("jax") is None or importlib.util.find_spec("mujoco.mjx") is None:
            raise UserError("--backend=mjx needs JAX and mujoco-mjx: pip install -e '.[mjx]'")
    if args.backend == "warp":
        from envs.physics.warp import warp_available

        if not warp_available():
            raise UserError("--backend=warp needs warp-lang and mujoco-warp: pip install -e '.[warp]'")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.video and not os.environ.get("DISPLAY"):
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering; must be set before mujoco is imported

    def run() -> int:
        validate(args)
        metrics = play(args) if args.checkpoint else {}
        if args.sim2sim:
            from deploy.run import run as run_sim2sim

            result = run_sim2sim(args.sim2sim, args.episodes, args.seed)
            metrics = {**metrics, "sim2sim": result} if metrics else result
        report(metrics)
        if args.wandb:
            log_to_wandb(args, metrics)
        write_json(args, metrics)
        return 0

    return run_reporting_errors(run, args.debug)


def write_json(args: argparse.Namespace, metrics: dict[str, Any]) -> None:
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(metrics, indent=2) + "\n")


def play(args: argparse.Namespace) -> dict[str, Any]:
    """Load the checkpoint, export it if asked, evaluate it (with video / viewer if asked); return the metrics."""
    import dataclasses

    import torch

    from configs.catalog import get_task
    from rl_core import checkpoint as ckpt
    from rl_core.evaluation import evaluate
    from rl_core.modules.actor_critic import ActorCritic

    path, data = ckpt.load_newest(args.checkpoint)
    task = args.task or data["task"]
    spec = get_task(task)
    ckpt.check_task(data, task, str(path))
    if args.wandb:
        _wandb_run_id(path)  # fail before the evaluation, not after it
    cfg = ckpt.read_config(data, spec.default_config(), str(path))
    env_cfg = dataclasses.replace(cfg.env, num_envs=args.num_envs or max(1, min(args.episodes, cfg.env.num_envs)))
    from envs.tasks.locomotion_config import LocomotionEnvConfig

    is_mujoco_task = isinstance(env_cfg, LocomotionEnvConfig)
    if args.backend:
        if not is_mujoco_task:
            raise UserError(f"--backend applies to the MuJoCo locomotion tasks, not to the Gymnasium task {task}")
        env_cfg = dataclasses.replace(env_cfg, backend=args.backend)
    if args.viewer and not is_mujoco_task:
        raise UserError(f"--viewer is for the MuJoCo locomotion tasks; use --video for the Gymnasium task {task}")
    if args.video and not is_mujoco_task:
        env_cfg = dataclasses.replace(env_cfg, render_mode="rgb_array")
    if (args.video or args.viewer) and not 0 <= args.video_env < env_cfg.num_envs:
        raise UserError(f"--video-env={args.video_env} is not allowed; expected 0..{env_cfg.num_envs - 1}")
    env = spec.make_env(env_cfg.for_evaluation(), torch.device("cpu"))
    try:
        ckpt.check_compatible(data, task, env, str(path))
        policy = ActorCritic.for_env(env, cfg.policy)
        policy.load_state_dict(data["policy"])
        policy.eval()
        export(args, task, data["iteration"], policy, env)
        if args.episodes == 0:
            return {"task": task, "checkpoint": str(path), "iteration": data["iteration"]}
        on_step, finish = recorder(args, env, is_mujoco_task)
        metrics = evaluate(policy, env, args.episodes, args.seed, on_step=on_step)
        write_json(args, {"task": task, "checkpoint": str(path), "iteration": data["iteration"], **metrics})
        if finish is not None:  # writing the video can fail: the evaluation is on disk already
            finish()
    finally:
        env.close()
    return {"task": task, "checkpoint": str(path), "iteration": data["iteration"], **metrics}


def export(args: argparse.Namespace, task: str, iteration: int, policy: Any, env: Any) -> None:
    from rl_core.export import export_jit, export_onnx, policy_metadata

    from rl_core.env_api import Exportable

    if (args.export_onnx or args.export_jit) and not isinstance(env, Exportable):
        raise UserError(f"task {task} cannot be exported: its env has no export metadata")
    if not (args.export_onnx or args.export_jit):
        return
    meta = policy_metadata(task, iteration, policy, env.export_metadata())
    if args.export_onnx:
        err = export_onnx(policy, args.export_onnx, meta, seed=args.seed)
        print(f"wrote {args.export_onnx} (onnxruntime vs torch on 1000 observations: max |diff| {err:.2g})")
    if args.export_jit:
        err = export_jit(policy, args.export_jit, meta, seed=args.seed)
        print(f"wrote {args.export_jit} (TorchScript vs torch on 1000 observations: max |diff| {err:.2g})")


def recorder(args: argparse.Namespace, env: Any, is_mujoco_task: bool):
    """The evaluation's (on_step, finish) callbacks for --video or --viewer, or (None, None)."""
    from envs import recorders

    if args.video:
        make = recorders.locomotion_video if is_mujoco_task else recorders.gym_video
        return make(env, args.video, args.video_env, args.video_seconds)
    if args.viewer:
        return recorders.viewer(env, args.video_env)
    return None, None


def report(metrics: dict[str, Any]) -> None:
    """A short table: the scalar metrics (next to the sim-to-sim ones when both ran) and the per-command ranges."""
    sim = metrics.get("sim2sim")
    title = metrics.get("task", "")
    if "iteration" in metrics:
        title += f" @ iteration {metrics['iteration']}"
    print(title)
    if sim is not None:
        print(f"  {'':26s} {'play (training sim)':>20s} {'sim2sim':>12s}")
    for name, value in metrics.items():
        if isinstance(value, (int, float)) and name != "iteration":
            other = sim.get(name) if sim else None
            right = f" {other:12.4f}" if isinstance(other, (int, float)) else ""
            print(f"  {name:26s} {value:20.4f}{right}")
    for key, rows in metrics.get("by_command", {}).items():
        sim_rows = sim["by_command"][key] if sim else None
        print(f"  by commanded {key}: steps, lin_vel / yaw_rate tracking error" + ("  | sim2sim" if sim_rows else ""))
        for b, r in enumerate(rows):
            line = f"    [{r['low']:+.2f}, {r['high']:+.2f}]  {_row(r)}"
            print(line + (f"  | {_row(sim_rows[b])}" if sim_rows else ""))


def log_to_wandb(args: argparse.Namespace, metrics: dict[str, Any]) -> None:
    """Resume the run folder's W&B run (train.py --logger wandb|both) and add the evaluation and the video."""
    import wandb

    from rl_core import checkpoint as ckpt

    path, data = ckpt.load_newest(args.checkpoint)
    project = data["config"].get("runner", {}).get("wandb_project", "legged-mjx")
    run = wandb.init(project=project, dir=str(ckpt.run_folder(path)), id=_wandb_run_id(path), resume="allow")
    scalars: dict[str, Any] = {f"play/{k}": v for k, v in metrics.items() if isinstance(v, (int, float))}
    if args.video:
        scalars["play/video"] = wandb.Video(args.video, format="mp4")
    run.log(scalars)
    run.finish()


def _wandb_run_id(checkpoint: Path) -> str:
    """The W&B run id that train.py --logger wandb|both kept in the checkpoint's run folder."""
    from rl_core import checkpoint as ckpt

    run_dir = ckpt.run_folder(checkpoint)
    id_file = run_dir / "wandb_run_id.txt"
    if not id_file.exists():
        raise UserError(f"--wandb: {run_dir} has no W&B run (train it with --logger wandb or both)")
    return id_file.read_text().strip()


def _row(r: dict[str, Any]) -> str:
    lin, yaw = r.get("lin_vel_tracking_error"), r.get("yaw_rate_tracking_error")
    return f"{r['steps']:7d}  " + ("  -      -   " if lin is None else f"{lin:.3f}  {yaw:.3f}")


if __name__ == "__main__":
    sys.exit(main())
