"""Checkpoints written by an older checkout, resumed by this one: one line per batched MuJoCo task.

    git worktree add /tmp/old de79c37          # or any checkout (git archive de79c37 | tar -x -C /tmp/old)
    python -m tools.experiments.resume_old --old /tmp/old [--task quadruped-flat ...] [--num-envs 64]

For each task (default: every registered batched MuJoCo task of this checkout): ``train.py --task T --num-envs N
--max-iterations 1`` runs in the old checkout (its own code, this interpreter), then ``train.py --resume RUN
--max-iterations 2`` here, and ``play.py --checkpoint RUN --episodes 2`` here. A task passes when both of this
checkout's commands exit 0 and the resumed run reached iteration 2. A distillation task (``TEACHERS``) first gets
its teacher's one-iteration run in the old checkout. Each command has a time limit (``--timeout``).
Issue 49's check that a refactor kept old checkpoints readable (docs/design.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
"""This checkout."""
TEACHERS = {"quadruped-flat-blind-distill": "quadruped-flat"}
"""The teacher task of each distillation task (its description names it): the old checkout trains the teacher for
one iteration first, and the student's old run reads it (``algorithm.teacher=RUN``)."""


def batched_tasks() -> list[str]:
    """The registered tasks whose env is a batched MuJoCo one (as rollout_hash's ``--task all``)."""
    from configs.catalog import registered

    return [n for n, s in registered().items() if hasattr(s.default_config().env, "physics_threads")]


def run(cmd: list[str], cwd: Path, timeout: float) -> tuple[int, str]:
    """Exit status and the last line of output of ``cmd`` run in ``cwd`` (124 on a time-out)."""
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:g} s"
    lines = (p.stdout + p.stderr).strip().splitlines()
    return p.returncode, lines[-1] if lines else ""


def check(task: str, old: Path, work: Path, num_envs: int, timeout: float) -> str:
    """The task's line: old run, resume here, play here."""
    run_dir = work / task.replace(":", "_")
    py = sys.executable
    first = [py, "train.py", "--task", task, "--num-envs", str(num_envs), "--max-iterations", "1", "--quiet",
             "--run-dir", str(run_dir)]
    rc, last = run(first, old, timeout)
    if rc != 0 and "algorithm.teacher" in last:
        if task not in TEACHERS:
            return f"| {task} | skipped: a distillation run needs a teacher run (algorithm.teacher) | - | - |"
        teacher_dir = work / f"{task}_teacher"
        rc, last = run([py, "train.py", "--task", TEACHERS[task], "--num-envs", str(num_envs), "--max-iterations",
                        "1", "--quiet", "--run-dir", str(teacher_dir)], old, timeout)
        if rc != 0:
            return f"| {task} | old teacher run ({TEACHERS[task]}) failed ({rc}): {last} | - | - |"
        rc, last = run([*first, f"algorithm.teacher={teacher_dir}"], old, timeout)
    if rc != 0:
        return f"| {task} | old run failed ({rc}): {last} | - | - |"
    rc_resume, last_resume = run([py, "train.py", "--resume", str(run_dir), "--max-iterations", "2"], HERE, timeout)
    resumed = rc_resume == 0 and (run_dir / "checkpoints" / "model_2.pt").is_file()
    rc_play, last_play = run([py, "play.py", "--checkpoint", str(run_dir), "--episodes", "2"], HERE, timeout)
    verdict = "resumed" if resumed else f"FAILED ({rc_resume}): {last_resume}"
    played = "played" if rc_play == 0 else f"FAILED ({rc_play}): {last_play}"
    return f"| {task} | written | {verdict} | {played} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the older checkout (a folder with train.py)")
    parser.add_argument("--task", action="append", help="a task (repeatable; default: every batched MuJoCo task)")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per command (default 600)")
    args = parser.parse_args()
    if not (args.old / "train.py").is_file():
        print(f"--old={args.old}: no train.py there; expected an older checkout of this repository")
        return 2
    lines = []
    with tempfile.TemporaryDirectory(prefix="resume_old_") as work:
        for task in args.task or batched_tasks():
            lines.append(check(task, args.old.resolve(), Path(work), args.num_envs, args.timeout))
            print(lines[-1], flush=True)
    return 0 if all("FAILED" not in line and "failed" not in line for line in lines) else 1


if __name__ == "__main__":
    raise SystemExit(main())
