"""Success rates of checkpoints per terrain type and level: the rough-terrain issue's table.

    python -m tools.terrain_table --checkpoint runs/quadruped-rough/<run> [--checkpoint runs/quadruped-flat/<run>] \\
        --episodes 50 --types stairs_up stairs_down slope_up slope_down rough --levels 0 1 2 3 4 5 6 7 8 9 \\
        --json terrain.json --markdown terrain.md

For each checkpoint, type and level: play.py --terrain TYPE --level L's evaluation, in this process: one env of
``--episodes`` envs, one episode each, on every tile of that type at that level (no curriculum, commands
straight ahead at 0.5-0.8 m/s, 12 s episodes); its success rate is the share of episodes whose base got
``env.success_distance`` (4 m) from its start. Per checkpoint and type: the success at the issue's "medium"
level (5) and the highest level evaluated with a success rate >= ``--threshold`` (80%). A flat-trained policy
is evaluated on the same generated terrain (it sees no height scan).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from contract.errors import OneLineParser, UserError, run_reporting_errors
from envs.terrain.config import MEDIUM_LEVEL, TILE_TYPES

DEFAULT_TYPES = ("stairs_up", "stairs_down", "slope_up", "slope_down", "rough")
SCALARS = ("success", "fall_rate", "mean_episode_length", "lin_vel_tracking_error")
"""Metrics kept per (type, level) in the JSON."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", action="append", required=True,
                   help="checkpoint file or run folder (its newest checkpoint); repeat for several rows")
    p.add_argument("--episodes", type=int, default=50,
                   help="episodes (= parallel envs) per type and level (default 50)")
    p.add_argument("--types", nargs="+", default=list(DEFAULT_TYPES), help="tile types (default: %(default)s)")
    p.add_argument("--levels", type=int, nargs="+", default=list(range(10)), help="levels (default 0..9)")
    p.add_argument("--threshold", type=float, default=0.8, help="success rate a level must reach (default 0.8)")
    p.add_argument("--seed", type=int, default=12345, help="seed of the evaluation episodes")
    p.add_argument("--json", help="write every rate and the summary to this file")
    p.add_argument("--markdown", help="write the tables to this file")
    p.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    return p.parse_args(argv)


def validate(args: argparse.Namespace) -> None:
    if args.episodes < 1:
        raise UserError(f"--episodes={args.episodes} is not allowed; expected an integer >= 1")
    for t in args.types:
        if t not in TILE_TYPES:
            raise UserError(f"--types: {t} is not allowed; expected tile types among {', '.join(TILE_TYPES)}")
    if min(args.levels) < 0:
        raise UserError(f"--levels: {min(args.levels)} is not allowed; expected integers >= 0")
    if not 0 < args.threshold <= 1:
        raise UserError(f"--threshold={args.threshold} is not allowed; expected a number in (0, 1]")
    for flag, suffix in (("json", ".json"), ("markdown", ".md")):
        value = getattr(args, flag)
        if value and Path(value).suffix.lower() != suffix:
            raise UserError(f"--{flag}={value} is not allowed; expected a file name ending in {suffix}")


def evaluate_checkpoint(checkpoint: str, types: list[str], levels: list[int], episodes: int, seed: int,
                        threshold: float) -> dict[str, Any]:
    """Every (type, level) of one checkpoint; returns its JSON row (see ``summarize``)."""
    import torch

    import play
    from rl_core.evaluation import evaluate

    run = play.load_run(checkpoint)
    base = dataclasses.replace(run.cfg.env, num_envs=episodes)
    for level in levels:  # every bad level fails before the first evaluation
        play.on_terrain(base, run.task, types[0], level)
    cells: dict[str, dict[str, dict[str, float | None]]] = {t: {} for t in types}
    for t in types:
        for level in levels:
            start = time.perf_counter()
            env = run.spec.make_env(play.on_terrain(base, run.task, t, level), torch.device("cpu"))
            try:
                metrics = evaluate(play.make_policy(run, env), env, episodes, seed)
            finally:
                env.close()
            cells[t][str(level)] = {k: metrics.get(k) for k in SCALARS}
            print(f"{run.task} @ {run.data['iteration']} {t} level {level}: success {_pct(metrics.get('success'))} "
                  f"({metrics['episodes']} episodes, {time.perf_counter() - start:.0f} s)", flush=True)
    return {"checkpoint": str(run.path), "task": run.task, "iteration": run.data["iteration"],
            "success_distance": base.success_distance, **summarize(cells, threshold), "by_level": cells}


def summarize(cells: dict[str, dict[str, dict[str, float | None]]], threshold: float) -> dict[str, Any]:
    """Per type: the success at the medium level (None if not evaluated) and the highest level whose success is
    at least ``threshold`` (None if none is)."""
    medium = {t: rows.get(str(MEDIUM_LEVEL), {}).get("success") for t, rows in cells.items()}
    highest = {t: max((int(lv) for lv, m in rows.items() if (m["success"] or 0.0) >= threshold), default=None)
               for t, rows in cells.items()}
    return {"medium": medium, "max_level": highest}


def markdown(rows: list[dict[str, Any]], types: list[str], levels: list[int], episodes: int, threshold: float) -> str:
    """A summary table (checkpoint rows x type columns) and, per checkpoint, success by level x type."""
    distances = ", ".join(f"{d:g}" for d in sorted({r["success_distance"] for r in rows}))
    out = [f"Success rate over {episodes} episodes per type and level (the base got {distances} m from its start "
           f"tile's centre before the episode ended); cell: success at level {MEDIUM_LEVEL} (medium) / highest level "
           f"with success >= {threshold:.0%}.", "",
           "| checkpoint | " + " | ".join(types) + " |", "|---|" + "---|" * len(types)]
    for r in rows:
        cells = [f"{_pct(r['medium'][t])} / {'-' if r['max_level'][t] is None else r['max_level'][t]}" for t in types]
        out.append(f"| {_label(r)} | " + " | ".join(cells) + " |")
    for r in rows:
        out += ["", f"{_label(r)}: success by level", "", "| level | " + " | ".join(types) + " |",
                "|---|" + "---|" * len(types)]
        for level in levels:
            by_type = [_pct(r["by_level"][t][str(level)]["success"]) for t in types]
            out.append(f"| {level} | " + " | ".join(by_type) + " |")
    return "\n".join(out) + "\n"


def _label(row: dict[str, Any]) -> str:
    return f"{row['task']} @ {row['iteration']} ({row['checkpoint']})"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def run() -> int:
        validate(args)
        rows = [evaluate_checkpoint(c, args.types, args.levels, args.episodes, args.seed, args.threshold)
                for c in args.checkpoint]
        table = markdown(rows, args.types, args.levels, args.episodes, args.threshold)
        print(table, end="")
        result = {"episodes": args.episodes, "seed": args.seed, "types": args.types, "levels": args.levels,
                  "threshold": args.threshold, "medium_level": MEDIUM_LEVEL, "checkpoints": rows}
        for path, text in ((args.json, json.dumps(result, indent=2) + "\n"), (args.markdown, table)):
            if path:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text(text)
        return 0

    return run_reporting_errors(run, args.debug)


if __name__ == "__main__":
    sys.exit(main())
