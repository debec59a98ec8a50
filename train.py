"""Train a task with PPO (or distill a trained teacher into a policy: algorithm.name=distillation).

    python train.py --task CartPole-v1
    python train.py --task Pendulum-v1 --seed 3 algorithm.learning_rate=3e-4 policy.actor_hidden_dims=[128,128]
    python train.py --resume runs/CartPole-v1/<run>            # continue from the newest checkpoint
    python train.py --task CartPole-v1 --run-dir runs/job --resume auto   # resume if runs/job has one, else start

SIGINT, SIGTERM and SIGUSR1 stop a run cleanly (rl_core/stopping.py): the iteration finishes, a final checkpoint
is saved, one line names the signal, the checkpoint and the resume command, and the exit status is 128 + signal.
An iteration still running ``runner.stop_grace_s`` (5 s) after the signal is abandoned: the last completed
iteration's state, kept in memory, is written as the final checkpoint (single-process runs).

Any config field can be overridden as ``section.field=value`` (values are YAML); ``--help --task T`` lists
the fields of task T with their defaults and docs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract.errors import OneLineParser, UserError, run_reporting_errors

if TYPE_CHECKING:
    from rl_core.stopping import StopRequest

AUTO = "auto"
"""``--resume auto``: resume from ``--run-dir`` if it holds a checkpoint that verifies, else start fresh there."""


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        description="Train a task (registered name or any Gymnasium id) with on-device PPO.",
        formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    p.add_argument("-h", "--help", action="store_true", help="show this help (with --task: that task's config fields)")
    p.add_argument("--task", help="registered task name, any Gymnasium id, or path/to/file.py:name (a task that file "
                   "defines; default: from --resume, else CartPole-v1)")
    p.add_argument("--seed", type=int, help="runner.seed")
    p.add_argument("--num-envs", type=int, help="env.num_envs")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--max-iterations", type=int, help="runner.max_iterations (clears runner.max_env_steps)")
    g.add_argument("--max-env-steps", type=int, help="runner.max_env_steps")
    p.add_argument("--device", help="runner.device: cpu, cuda or cuda:N")
    p.add_argument("--run-dir",
                   help="run folder (default runs/<task>/<date-time>; with --resume, the checkpoint's run folder)")
    p.add_argument("--resume", metavar="CHECKPOINT",
                   help="checkpoint file or run folder (newest checkpoint) to continue from; 'auto' (with --run-dir "
                   "DIR): the newest checkpoint in DIR that verifies, else a fresh start in DIR (one command for a "
                   "scheduler to run again and again)")
    p.add_argument("--list-tasks", action="store_true", help="list registered tasks and exit")
    p.add_argument("--check", action="store_true", help="run the robot check on the task's robot and exit (as "
                   "python -m tools.check_robot; exit status 1 when it fails)")
    p.add_argument("--logger", choices=("tensorboard", "wandb", "both"),
                   help="runner.logger (W&B offline: WANDB_MODE=offline)")
    p.add_argument("--quiet", action="store_true", help="no per-iteration console line")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    p.add_argument("overrides", nargs="*", metavar="section.field=value",
                   help="config overrides, e.g. algorithm.gamma=0.98")
    return p


def resolve_config(args: argparse.Namespace) -> tuple[Any, Any, dict | None, Path | None]:
    """Task spec, final config, loaded checkpoint (or None) and its path. Raises UserError before any work."""
    from configs.catalog import get_task
    from rl_core import checkpoint as ckpt
    from rl_core.config_io import apply_overrides, parse_override

    data, ckpt_path = None, None
    if args.resume == AUTO:
        if not args.run_dir:
            raise UserError("--resume auto needs --run-dir DIR: the run folder to resume from, or to start in")
        found = ckpt.load_newest_if_any(args.run_dir)
        if found is not None:
            ckpt_path, data = found
    elif args.resume:
        ckpt_path, data = ckpt.load_newest(args.resume)
    if data is not None:
        if args.task:
            ckpt.check_task(data, args.task, str(ckpt_path))
        args.task = data.get("task")
    task = args.task or "CartPole-v1"
    spec = get_task(task)
    cfg = spec.default_config()
    if data is not None:
        cfg = ckpt.read_config(data, cfg, str(ckpt_path))
    overrides: dict[str, Any] = {}
    for text in args.overrides:
        key, value = parse_override(text)
        overrides[key] = value
    for key, value in (("runner.seed", args.seed), ("env.num_envs", args.num_envs), ("runner.device", args.device),
                       ("runner.logger", args.logger), ("runner.max_env_steps", args.max_env_steps)):
        if value is not None:
            overrides[key] = value
    if args.max_iterations is not None:
        overrides["runner.max_iterations"] = args.max_iterations
        overrides["runner.max_env_steps"] = None
    cfg = apply_overrides(cfg, overrides)
    _check_device(cfg.runner.device)
    _check_logger(cfg.runner.logger)
    return spec, cfg, data, ckpt_path


def _check_logger(logger: str) -> None:
    import importlib.util

    if logger in ("wandb", "both") and importlib.util.find_spec("wandb") is None:
        raise UserError(f"config error: runner.logger={logger!r} needs the wandb package: pip install -e '.[wandb]'")


def _check_device(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise UserError(f"config error: runner.device={device!r} but no CUDA device is available; use 'cpu'")
        index = int(device.split(":")[1]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise UserError(f"config error: runner.device={device!r} but only {torch.cuda.device_count()} "
                            "CUDA device(s) exist")


def print_help(parser: argparse.ArgumentParser, task: str | None) -> None:
    from configs.catalog import get_task
    from rl_core.config_io import describe

    parser.print_help()
    name = task or "CartPole-v1"
    print(f"\nconfig fields of task {name} (override as section.field=value):")
    import torch

    from configs.machine import notes

    spec = get_task(name)
    cfg = spec.default_config()
    print("\n".join(describe(cfg)))
    machine = notes(spec, cfg, torch.cuda.is_available())
    if machine:
        print("\n" + "\n".join(machine))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)  # overrides may come before and after flags
    return run_reporting_errors(lambda: _dispatch(parser, args), args.debug)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.help:
        print_help(parser, args.task)
        return 0
    if args.list_tasks:
        from configs.catalog import registered

        for name, spec in registered().items():
            print(f"{name:24s} {spec.description}")
        print("(any other Gymnasium id also works, with generic defaults; menagerie:NAME[:rough] a MuJoCo Menagerie "
              "legged robot by name, path/to/robot.py:flat a robot file: docs/robots.md)")
        return 0
    if args.check:
        from configs.catalog import get_task
        from envs.robot_check.verdict import check, render

        report = check(get_task(args.task or "CartPole-v1"))
        print(render(report))
        return 1 if report["verdict"] == "FAIL" else 0
    return train(args)


def prepare_algorithm(cfg: Any, data: dict | None, ckpt_path: Path | None) -> dict | None:
    """What the algorithm reads before any env is built (``Algorithm.prepare``: distillation's teacher, from
    algorithm.teacher or the checkpoint resumed). One-line errors: a resume with another algorithm, a missing
    teacher, an unreadable file."""
    from contract.errors import CheckpointError

    name = cfg.algorithm.name
    if data is not None:
        saved = data.get("config", {}).get("algorithm", {}).get("name", "ppo")
        if saved != name:
            raise CheckpointError(f"checkpoint error: {ckpt_path} was trained with algorithm.name={saved}, this run "
                                  f"has algorithm.name={name}; resume with the same algorithm")
    from rl_core.algorithms import algorithm_class

    return algorithm_class(name).prepare(cfg.algorithm, data, str(ckpt_path))


def train(args: argparse.Namespace) -> int:
    from rl_core.stopping import stop_on_signals

    # From here on SIGINT / SIGTERM / SIGUSR1 ask for a clean stop, whatever the process inherited (SIGINT ignored
    # under nohup or in a background job): a signal during the setup stops before the first iteration.
    with stop_on_signals() as stop:
        spec, cfg, data, ckpt_path = resolve_config(args)
        prepared = prepare_algorithm(cfg, data, ckpt_path)

        import dataclasses

        from rl_core import distributed

        if distributed.launched_by_torchrun():  # one process per rank; rank 0 alone writes and prints
            device = distributed.init_from_environment(cfg.runner.device)
            cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, device=device))
        try:
            return _train(args, spec, cfg, data, ckpt_path, distributed.is_main(), prepared, stop)
        finally:
            distributed.shutdown()


def stop_line(signum: int, iteration: int, checkpoint: Path | None, run_dir: Path, ranks: int) -> str:
    """The one line a stopped run prints: the signal, the checkpoint and the command that continues the run."""
    from rl_core.stopping import signal_name

    launcher = f"torchrun --nproc_per_node={ranks}" if ranks > 1 else "python"
    return (f"stopped by {signal_name(signum)} at iteration {iteration}; checkpoint {checkpoint or 'none yet'}; "
            f"resume with: {launcher} train.py --resume auto --run-dir {run_dir}")


def _stop_now(signum: int, runner: Any, run_dir: Path) -> None:
    """The stop timer's way out (``runner.stop_grace_s`` after a stop signal, the iteration still running): the
    last completed iteration's checkpoint, the stop line, exit 128 + signal (rl_core/stopping.py)."""
    from contract.errors import CheckpointError
    from rl_core.stopping import exit_status, signal_name

    try:
        iteration, path = runner.write_last_completed()
        line = stop_line(signum, iteration, path, run_dir, 1)
    except CheckpointError as e:
        line = f"stopped by {signal_name(signum)}: {e}; last good checkpoint: {runner.last_checkpoint or 'none'}"
    os.write(2, f"{line}\n".encode())  # not print: the main thread may hold the stream's lock
    os._exit(exit_status(signum))


def _train(args: argparse.Namespace, spec: Any, cfg: Any, data: dict | None, ckpt_path: Path | None, main: bool,
           prepared: dict | None = None, stop: StopRequest | None = None) -> int:
    from rl_core import checkpoint as ckpt
    from rl_core import distributed
    from rl_core.config_io import dump_yaml
    from rl_core.runner import OnPolicyRunner

    say = print if main else (lambda *a, **k: None)

    if spec.check_dependencies is not None:
        spec.check_dependencies()  # a missing package fails here, before the run folder exists
    if spec.validate is not None:
        spec.validate(cfg.env)  # so does a bad robot spec (a name, a regex, an MJCF that does not compile)
    if args.run_dir:
        run_dir = Path(args.run_dir)
    elif ckpt_path is not None:
        run_dir = ckpt.run_folder(ckpt_path)
    else:
        run_dir = Path("runs") / spec.name / time.strftime("%Y%m%d-%H%M%S")
    if main:
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"--run-dir={str(run_dir)!r} cannot be created: {e.strerror}") from None
        tmp = run_dir / ".config.yaml.tmp"  # replaced in one step: a crash never leaves half a config
        import torch

        from configs.machine import notes

        machine = "".join(f"# {line}\n" for line in notes(spec, cfg, torch.cuda.is_available()))
        try:
            tmp.write_text(f"# task: {spec.name}\n" + machine + dump_yaml(cfg))
            tmp.replace(run_dir / "config.yaml")
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise UserError(f"cannot write {run_dir / 'config.yaml'}: {ckpt.write_failure(e, run_dir)}"
                            + (f"; nothing was trained, {ckpt_path} is unchanged" if ckpt_path else "")) from None

    import torch

    env = spec.make_env(cfg.env, torch.device(cfg.runner.device))
    try:
        runner = OnPolicyRunner(env, cfg, task=spec.name, run_dir=run_dir, quiet=args.quiet or not main,
                                prepared=prepared)
        if data is not None:
            runner.load_state_dict(data, source=str(ckpt_path))
            runner.last_checkpoint = ckpt_path
            if main and ckpt_path is not None:
                ckpt.remove_stale_temporaries(ckpt_path.parent)
            say(f"resumed from {ckpt_path} at iteration {runner.iteration}", flush=True)
        ranks = distributed.world_size()
        say(f"training {spec.name}: {cfg.env.num_envs} envs x {cfg.runner.num_steps_per_env} steps"
            + (f" on each of {ranks} ranks" if ranks > 1 else "") + f", {runner.total_iterations} iterations, "
            f"run folder {run_dir}", flush=True)
        if stop is not None and ranks == 1 and main:
            runner.keep_last_state = True
            stop.arm(cfg.runner.stop_grace_s, lambda signum: _stop_now(signum, runner, run_dir))
        summary = runner.learn(stop=stop)
    finally:
        env.close()
    if runner.stopped_by:  # the final checkpoint is written, the loggers flushed and closed
        from rl_core.stopping import exit_status

        say(stop_line(runner.stopped_by, runner.iteration, runner.last_checkpoint, run_dir, ranks), file=sys.stderr,
            flush=True)
        return exit_status(runner.stopped_by)
    ret = summary["mean_episode_return"]
    say(f"done: {summary['env_steps']:,} env steps in {summary['wall_time_s']:.1f} s "
          f"({summary['samples_per_s']:,.0f} samples/s), mean episode return "
          f"{'n/a' if ret is None else f'{ret:.2f}'}; run folder {run_dir}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
