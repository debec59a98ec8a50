"""Evaluate a trained checkpoint, film it, export it for a robot, and check the export outside the trainer.

    python play.py --checkpoint runs/quadruped-flat/<run>                  # newest checkpoint, 10 episodes
    python play.py --checkpoint runs/quadruped-flat/<run> --video walk.mp4 --json eval.json
    python play.py --checkpoint runs/quadruped-flat/<run> --export-onnx policy.onnx --sim2sim policy.onnx
    python play.py --sim2sim policy.onnx --episodes 20                      # onnxruntime only, no checkpoint
    python play.py --checkpoint runs/quadruped-rough/<run> --terrain stairs_up --level 5 --episodes 50
    python play.py --checkpoint runs/quadruped-rough/<run> --terrain stairs_up --video stairs.mp4
    python play.py --checkpoint runs/quadruped-flat/<run> --web             # watch it in a browser (port 8080)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.errors import OneLineParser, UserError, run_reporting_errors
from envs.physics.registry import BACKENDS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(description="Evaluate a checkpoint (deterministic policy, frozen normalizer), "
                                            "record it, export it to ONNX / TorchScript, check an ONNX file.")
    p.add_argument("--checkpoint", help="checkpoint file or run folder (its newest checkpoint)")
    p.add_argument("--task", help="task (default: the checkpoint's)")
    p.add_argument("--episodes", type=int, default=10, help="episodes to evaluate (default 10; 0: export only)")
    p.add_argument("--num-envs", type=int, help="parallel envs (default: min(episodes, the run's num_envs))")
    p.add_argument("--seed", type=int, default=12345, help="seed of the evaluation episodes")
    p.add_argument("--backend", choices=BACKENDS,
                   help="physics backend (MuJoCo tasks; default: the run's, where auto means native on a CPU)")
    p.add_argument("--json", help="write the metrics to this file")
    p.add_argument("--video", help="write an MP4 of one env (locomotion: plus a gait plot PNG next to it)")
    p.add_argument("--video-env", type=int, default=0,
                   help="which env to film, view or (--web) follow first (default 0)")
    p.add_argument("--video-seconds", type=float, default=10.0,
                   help="length of the video or of the recorded clip (default 10 s)")
    p.add_argument("--video-quality", choices=("auto", "full", "light"), default="auto",
                   help="MuJoCo tasks: draw shadows and reflections (full), not (light), or not when a frame would "
                        "cost more than 0.25 s to draw, e.g. on a software renderer (auto, said in one line)")
    p.add_argument("--record-motion", metavar="CLIP.npz",
                   help="record env --video-env's robot as a motion clip (base pose and every joint at the control "
                        "rate, until --video-seconds or its first episode's end; docs/motion.md)")
    p.add_argument("--command", type=float, nargs=3, metavar=("VX", "VY", "YAW"),
                   help="locomotion: every env tracks this command (m/s, m/s, rad/s) throughout, e.g. to record a "
                        "walk with a turn")
    p.add_argument("--viewer", action="store_true", help="watch in MuJoCo's interactive viewer (needs a display)")
    p.add_argument("--web", action="store_true",
                   help="serve a page at http://HOST:PORT showing the robots live, with command sliders, plots and a "
                        "checkpoint picker (pip install -e \".[web]\"); runs until Ctrl-C")
    p.add_argument("--port", type=int, default=8080, help="--web: TCP port (default 8080)")
    p.add_argument("--host", default="127.0.0.1",
                   help="--web: interface to bind (default 127.0.0.1, this machine only; 0.0.0.0: every interface)")
    p.add_argument("--export-onnx", help="write the policy (normalizer + actor) to this ONNX file, checked")
    p.add_argument("--export-jit", help="write the policy to this TorchScript file, checked")
    p.add_argument("--sim2sim", help="run this exported ONNX file with onnxruntime in plain MuJoCo / Gymnasium")
    from envs.terrain.config import TILE_TYPES

    p.add_argument("--terrain", metavar="TYPE",
                   help=f"locomotion: evaluate on the generated terrain's tiles of this type ({', '.join(TILE_TYPES)}) "
                        "at --level: no curriculum, commands straight ahead at 0.5-0.8 m/s, 12 s episodes; adds "
                        "terrain.success_rate (also with --sim2sim)")
    p.add_argument("--level", type=int, help="terrain level of --terrain (default 5, the issue's medium: stairs 7 cm, "
                                              "slopes 15 degrees, rough 4 cm)")
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
    validate_terrain(args)
    if args.web:
        validate_web(args)
    if args.checkpoint is None:
        for flag in ("task", "num_envs", "backend", "video", "viewer", "export_onnx", "export_jit", "wandb",
                     "record_motion", "command"):
            if getattr(args, flag):
                raise UserError(f"--{flag.replace('_', '-')} needs --checkpoint "
                                "(--sim2sim alone runs only the ONNX file)")
    for flag, suffix in (("video", ".mp4"), ("export_onnx", ".onnx"), ("json", ".json"), ("record_motion", ".npz")):
        value = getattr(args, flag)
        if value and Path(value).suffix.lower() != suffix:
            raise UserError(f"--{flag.replace('_', '-')}={value} is not allowed; "
                            f"expected a file name ending in {suffix}")
    if args.viewer and not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        raise UserError("--viewer needs a display (DISPLAY is not set); use --video OUT.mp4 on a headless machine")
    if args.backend:
        from envs.physics.factory import require_backend

        require_backend(args.backend, "--backend")


def validate_web(args: argparse.Namespace) -> None:
    """``--web``: a checkpoint, no other output, the viser extra, and a port this machine can bind now."""
    from apps.web.app import check_port, require_viser

    if args.checkpoint is None:
        raise UserError("--web needs --checkpoint (a checkpoint file or run folder)")
    others = [f"--{f.replace('_', '-')}" for f in ("video", "viewer", "export_onnx", "export_jit", "sim2sim", "json",
                                                    "terrain", "wandb") if getattr(args, f)]
    if others:
        raise UserError(f"--web runs alone, not with {', '.join(others)} (the page has its own terrain picker)")
    require_viser()
    check_port(args.host, args.port)


def validate_terrain(args: argparse.Namespace) -> None:
    """``--terrain TYPE`` names a tile type, ``--level`` comes with it (its upper bound is the run's)."""
    from envs.terrain.config import MEDIUM_LEVEL, TILE_TYPES

    if args.terrain is None:
        if args.level is not None:
            raise UserError(f"--level needs --terrain TYPE (one of {', '.join(TILE_TYPES)})")
        return
    if args.terrain not in TILE_TYPES:
        raise UserError(f"--terrain={args.terrain} is not allowed; expected one of {', '.join(TILE_TYPES)}")
    if args.level is None:
        args.level = MEDIUM_LEVEL
    if args.level < 0:
        raise UserError(f"--level={args.level} is not allowed; expected an integer >= 0 (a terrain level)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.video and not os.environ.get("DISPLAY"):
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering; must be set before mujoco is imported

    def run() -> int:
        validate(args)
        if args.web:
            return web(args)
        metrics = play(args) if args.checkpoint else {}
        if args.sim2sim:
            from apps.sim2sim import run as run_sim2sim

            result = run_sim2sim(args.sim2sim, args.episodes, args.seed, terrain_eval(args))
            if args.terrain:
                result["terrain"] = terrain_section(args.terrain, args.level, result)
            metrics = {**metrics, "sim2sim": result} if metrics else result
        report(metrics)
        if args.wandb:
            log_to_wandb(args, metrics)
        write_json(args, metrics)
        return 0

    return run_reporting_errors(run, args.debug)


def write_json(args: argparse.Namespace, metrics: dict[str, Any]) -> None:
    """The metrics to ``--json``; if that write fails (a full disk, an unwritable folder) they go to stdout first,
    so the evaluation is not lost, then one line names the path."""
    if args.json:
        text = json.dumps(metrics, indent=2) + "\n"
        try:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(text)
        except OSError as e:
            from rl_core.checkpoint import write_failure

            print(text, end="", flush=True)
            raise UserError(f"--json={args.json} could not be written: {write_failure(e, Path(args.json).parent)}; "
                            "the metrics are printed above") from None


def play(args: argparse.Namespace) -> dict[str, Any]:
    """Load the checkpoint, export it if asked, evaluate it (with video / viewer if asked); return the metrics."""
    import dataclasses

    import torch

    from envs.tasks.mujoco_config import MujocoEnvConfig
    from rl_core.evaluation import evaluate

    run = load_run(args.checkpoint, args.task)
    path, data, task, spec, cfg = run.path, run.data, run.task, run.spec, run.cfg
    if args.wandb:
        _wandb_run_id(path)  # fail before the evaluation, not after it
    env_cfg = dataclasses.replace(cfg.env, num_envs=args.num_envs or max(1, min(args.episodes, cfg.env.num_envs)))
    is_mujoco_task = isinstance(env_cfg, MujocoEnvConfig)
    if args.terrain:
        env_cfg = on_terrain(env_cfg, task, args.terrain, args.level)
    if args.backend:
        if not is_mujoco_task:
            raise UserError(f"--backend applies to the MuJoCo tasks, not to the Gymnasium task {task}")
        env_cfg = dataclasses.replace(env_cfg, backend=args.backend)
    if args.viewer and not is_mujoco_task:
        raise UserError(f"--viewer is for the MuJoCo tasks; use --video for the Gymnasium task {task}")
    if args.video and not is_mujoco_task:
        if not hasattr(env_cfg, "render_mode"):  # neither locomotion nor Gymnasium: no recorder knows it yet
            raise UserError(f"--video is not available for task {task}: it films MuJoCo tasks (envs/tasks/base.py) "
                            "and Gymnasium tasks")
        env_cfg = dataclasses.replace(env_cfg, render_mode="rgb_array")
    if args.record_motion and not is_mujoco_task:
        raise UserError(f"--record-motion records MuJoCo tasks with a floating base, not task {task}")
    if (args.video or args.viewer or args.record_motion) and not 0 <= args.video_env < env_cfg.num_envs:
        raise UserError(f"--video-env={args.video_env} is not allowed; expected 0..{env_cfg.num_envs - 1}")
    env = spec.make_env(env_cfg.for_evaluation(), torch.device("cpu"))
    try:
        policy = make_policy(run, env)
        export(args, task, data["iteration"], policy, env)
        if args.episodes == 0:
            return {"task": task, "checkpoint": str(path), "iteration": data["iteration"]}
        hold_command(args, env, task)
        on_step, finish = recorder(args, env, is_mujoco_task)
        metrics = evaluate(policy, env, args.episodes, args.seed, on_step=on_step)
        if args.terrain:
            metrics["terrain"] = terrain_section(args.terrain, args.level, metrics)
        write_json(args, {"task": task, "checkpoint": str(path), "iteration": data["iteration"], **metrics})
        if finish is not None:  # writing the video can fail: the evaluation is on disk already
            finish()
    finally:
        env.close()
    return {"task": task, "checkpoint": str(path), "iteration": data["iteration"], **metrics}


WEB_ENVS = 16
"""Robots shown by --web without --num-envs."""


def web(args: argparse.Namespace) -> int:
    """``--web``: serve the page of an evaluation batch of the checkpoint's task until Ctrl-C."""
    import dataclasses

    import torch

    from apps.web.app import WebOptions, WebViewer
    from apps.web.session import Session, check_web_task, with_envs
    from rl_core.checkpoint import run_folder

    run = load_run(args.checkpoint, args.task)
    check_web_task(run.cfg.env, run.task)
    env_cfg = with_envs(run.cfg.env, args.num_envs or WEB_ENVS)
    if args.backend:
        env_cfg = dataclasses.replace(env_cfg, backend=args.backend)
    if not 0 <= args.video_env < env_cfg.num_envs:
        raise UserError(f"--video-env={args.video_env} is not allowed; expected 0..{env_cfg.num_envs - 1}")
    cpu = torch.device("cpu")
    session = Session(run, env_cfg, lambda cfg: run.spec.make_env(cfg, cpu), make_policy,
                      lambda path: load_run(str(path), run.task), args.seed)
    viewer = WebViewer(session, WebOptions(args.host, args.port, args.video_env), run_folder(run.path))
    print(f"web viewer: http://{args.host}:{args.port}  ({session.num_envs} robots of {run.task}, "
          f"{session.describe()}; Ctrl-C to stop)", flush=True)
    try:
        viewer.serve()
    except KeyboardInterrupt:
        print("web viewer: stopped", flush=True)
    return 0


@dataclass(frozen=True)
class Run:
    """A loaded checkpoint: its file, contents, task (checked against it) and training config."""

    path: Path
    data: dict[str, Any]
    task: str
    spec: Any
    """The task's ``envs.registry.TaskSpec``."""
    cfg: Any
    """The run's ``TrainConfig`` (the checkpoint's config over the task's defaults)."""


def load_run(checkpoint: str, task: str | None = None) -> Run:
    """The newest checkpoint of ``checkpoint`` (a file or run folder); ``task`` None: the checkpoint's own."""
    from configs.catalog import get_task
    from rl_core import checkpoint as ckpt

    path, data = ckpt.load_newest(checkpoint)
    task = task or data["task"]
    spec = get_task(task)
    ckpt.check_task(data, task, str(path))
    return Run(path, data, task, spec, ckpt.read_config(data, spec.default_config(), str(path)))


def make_policy(run: Run, env: Any) -> Any:
    """The checkpoint's policy for ``env`` (checked compatible), in evaluation mode."""
    from rl_core import checkpoint as ckpt
    from rl_core.modules.actor_critic import ActorCritic

    ckpt.check_compatible(run.data, run.task, env, str(run.path))
    policy = ActorCritic.for_env(env, run.cfg.policy)
    policy.load_state_dict(run.data["policy"])
    return policy.eval()


def on_terrain(env_cfg: Any, task: str, tile_type: str, level: int) -> Any:
    """``env_cfg`` evaluated on the tiles of ``tile_type`` at ``level`` (``LocomotionEnvConfig.on_terrain``; a
    flat-trained policy's plane becomes the generated terrain); one-line errors for other tasks and levels."""
    from envs.tasks.locomotion.config import LocomotionEnvConfig

    if not isinstance(env_cfg, LocomotionEnvConfig):
        raise UserError(f"--terrain applies to the MuJoCo locomotion tasks, not to task {task}")
    levels = env_cfg.terrain.levels
    if not 0 <= level < levels:
        raise UserError(f"--level={level} is not allowed; expected an integer in [0, {levels - 1}] "
                        f"(the run's env.terrain.levels is {levels})")
    return env_cfg.on_terrain(tile_type, level)


def terrain_section(tile_type: str, level: int, metrics: dict[str, Any]) -> dict[str, Any]:
    """The JSON's ``terrain``: where the episodes ran and the share of them that got ``env.success_distance`` away."""
    return {"type": tile_type, "level": level, "success_rate": metrics.get("success")}


def terrain_eval(args: argparse.Namespace) -> Any:
    """sim2sim's ``deploy.terrain.TerrainEval`` for ``--terrain`` (None without): play's evaluation commands."""
    if args.terrain is None:
        return None
    from deploy.terrain import TerrainEval
    from envs.tasks.locomotion.config import TERRAIN_EVAL_EPISODE_S, TERRAIN_EVAL_SPEED

    return TerrainEval(args.terrain, args.level, TERRAIN_EVAL_SPEED, TERRAIN_EVAL_EPISODE_S)


def export(args: argparse.Namespace, task: str, iteration: int, policy: Any, env: Any) -> None:
    from rl_core.env_api import Exportable, StackedObservations
    from rl_core.export import PARITY_SAMPLES, PARITY_SEQUENCE_STEPS, export_jit, export_onnx, policy_metadata

    if (args.export_onnx or args.export_jit) and not isinstance(env, Exportable):
        raise UserError(f"task {task} cannot be exported: its env has no export metadata")
    if not (args.export_onnx or args.export_jit):
        return
    frames = env.obs_frames if isinstance(env, StackedObservations) else 1
    meta = policy_metadata(task, iteration, policy, env.export_metadata(), frames)
    probe = (f"a {PARITY_SEQUENCE_STEPS}-step sequence, state carried" if policy.is_recurrent or frames > 1
             else f"{PARITY_SAMPLES} observations")
    if args.export_onnx:
        err = export_onnx(policy, args.export_onnx, meta, seed=args.seed)
        print(f"wrote {args.export_onnx} (onnxruntime vs torch on {probe}: max |diff| {err:.2g})")
    if args.export_jit:
        err = export_jit(policy, args.export_jit, meta, seed=args.seed)
        print(f"wrote {args.export_jit} (TorchScript vs torch on {probe}: max |diff| {err:.2g})")


def recorder(args: argparse.Namespace, env: Any, is_mujoco_task: bool):
    """The evaluation's (on_step, finish) callbacks for --video or --viewer and --record-motion, or (None, None)."""
    from apps import recorders

    film: Any = (None, None)
    if args.video:
        film = (recorders.mujoco_video(env, args.video, args.video_env, args.video_seconds, args.video_quality)
                if is_mujoco_task else recorders.gym_video(env, args.video, args.video_env, args.video_seconds))
    elif args.viewer:
        film = recorders.viewer(env, args.video_env)
    record: Any = (None, None)
    if args.record_motion:
        record = recorders.motion_recording(env, args.record_motion, args.video_env, args.video_seconds)
    return recorders.combined(film, record)


def hold_command(args: argparse.Namespace, env: Any, task: str) -> None:
    """``--command VX VY YAW``: every env of a locomotion task tracks it from the first step on."""
    if args.command is None:
        return
    import torch

    from envs.tasks.locomotion import LocomotionEnv

    if not isinstance(env, LocomotionEnv):
        raise UserError(f"--command applies to the locomotion tasks, not to task {task}")
    env.hold_commands(torch.tensor([args.command], dtype=torch.float32).expand(env.num_envs, 3))


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
        if isinstance(value, (int, float)) and name not in ("iteration", "diverged_episodes"):
            other = sim.get(name) if sim else None
            right = f" {other:12.4f}" if isinstance(other, (int, float)) else ""
            print(f"  {name:26s} {value:20.4f}{right}")
    if "diverged_episodes" in metrics:
        print(f"  diverged episodes: {metrics['diverged_episodes']} "
              "(left out of every metric above: no success, no fall)")
    terrain = metrics.get("terrain") or (sim or {}).get("terrain")
    if terrain is not None:
        rates = [m["terrain"]["success_rate"] for m in (metrics, sim or {}) if m.get("terrain")]
        print(f"  terrain {terrain['type']} level {terrain['level']}: success rate "
              + " | ".join("-" if r is None else f"{r:.2f}" for r in rates)
              + ("  (play | sim2sim)" if len(rates) == 2 else ""))
    for key, rows in metrics.get("by_command", {}).items():
        if rows and rows[0]["low"] == rows[-1]["high"]:  # a fixed command (--terrain: no sideways, no turning)
            continue
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
