"""Inject every fault the trainer must survive, many times, and print the fault table (docs/reliability.md).

    python -m tools.experiments.fault_campaign [--repeats 10] [--out docs/fault_table.md]
    python -m tools.experiments.fault_campaign --only signals        # the signal rows alone (a few minutes)

Faults: a bad value for every CLI flag of train.py and play.py and for config overrides; damaged, foreign and
malicious checkpoints (given to play.py and to train.py --resume); NaN physics; NaN learning; SIGKILL at random
moments with a save every iteration (so some kills land inside a save); SIGINT, SIGTERM and SIGUSR1 (also with
SIGINT ignored at start, during saves, three in a row, under torchrun); operating-system faults (a full
disk during a save, a run folder that turns read-only, an unreadable checkpoint); and memory growth over many
iterations. Each row says how often the fault was tried and what came of it. The injections live in
``fault_injection/harness.py``; ``tests/apps/test_faults.py`` runs them with fewer repeats.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from fault_injection.harness import (
    CLI_CASES,
    FULL_DISK,
    STEP_SLEEP_ENV,
    damaged_checkpoints,
    disk_full_round,
    failing_save_round,
    kill_round,
    make_checkpoint,
    nan_learning_run,
    nan_physics_round,
    one_line_error,
    rss_growth_mb,
    run_cli,
    try_checkpoint,
)
from fault_injection.signals import clean_stop, signal_round, signals_during_save_round, torchrun_sigterm_round

Row = tuple[str, int, str]
"""One line of the fault table: the fault, how often it was tried, what came of it."""


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or '').splitlines()[0])
    p.add_argument("--repeats", type=int, default=10, help="tries of each random fault (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="also write the table (markdown) to this file")
    p.add_argument("--only", choices=("signals",), help="only these rows (signals: a few minutes)")
    args = p.parse_args()
    rng = random.Random(args.seed)
    rows: list[Row] = []
    t0 = time.time()

    if args.only == "signals":
        with tempfile.TemporaryDirectory() as tmp_name:
            rows += signal_rows(Path(tmp_name), args.repeats, rng)
        return _print_table(rows, t0, args.out)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        run = make_checkpoint(tmp / "cartpole")
        good = run / "checkpoints" / "model_2.pt"
        # The rows draw from one random stream in this order, so a seed gives the same campaign.
        rows += cli_rows(tmp, good)
        rows += checkpoint_rows(tmp, good, args.repeats, rng)
        rows += learning_fault_rows(tmp, args.seed, args.repeats, rng)
        rows += kill_rows(tmp, args.repeats, rng)
        rows += signal_rows(tmp, args.repeats, rng)
        rows += save_failure_rows(tmp, args.repeats, rng)

    growth = rss_growth_mb()
    rows.append(("memory over 200 CartPole iterations after a 100-iteration warm-up", 1,
                 f"RSS grew by {growth:.1f} MiB"))

    return _print_table(rows, t0, args.out)


def cli_rows(tmp: Path, good: Path) -> list[Row]:
    """A bad value for every flag of train.py and play.py (``CLI_CASES``); the failures are printed to stderr."""
    (tmp / "junk.onnx").write_bytes(b"not an onnx file")
    ok: Counter[str] = Counter()
    failures: list[str] = []
    for i, (script, argv, expected) in enumerate(CLI_CASES):
        argv = [a.format(ckpt=good, junk=tmp / "junk.onnx") for a in argv]
        workdir = tmp / f"cli_{i}"
        workdir.mkdir()
        result = run_cli(script, argv, workdir)
        if one_line_error(result, expected):
            ok[script] += 1
        else:
            failures.append(f"{script} {' '.join(argv)}: {result}")
    rows: list[Row] = []
    for script in ("train", "play"):
        n = sum(1 for s, _, _ in CLI_CASES if s == script)
        what = f"{script}.py: a bad value for every flag" + (" and config overrides" if script == "train" else "")
        rows.append((what, n, f"{ok[script]}/{n} one-line error, exit 2, before any env is built, nothing written"))
    for f in failures:
        print("CLI case failed:", f, file=sys.stderr)
    return rows


def checkpoint_rows(tmp: Path, good: Path, repeats: int, rng: random.Random) -> list[Row]:
    """Damaged, foreign and malicious checkpoints given to play.py and train.py --resume; a torn newest one."""
    import torch

    from rl_core import checkpoint as ckpt

    rows: list[Row] = []
    good_sum = ckpt.checksum(torch.load(good, weights_only=True))
    by_kind: dict[str, Counter] = {}
    marker = tmp / "pwned"
    for kind, path in damaged_checkpoints(good, tmp / "damaged", repeats, rng, marker):
        by_kind.setdefault(kind, Counter())[try_checkpoint(path, good_sum, tmp / "work", marker)] += 1
    for kind, outcomes in by_kind.items():
        rows.append((f"checkpoint: {kind} (play.py and train.py --resume)", sum(outcomes.values()),
                     ", ".join(f"{n}x {o}" for o, n in outcomes.items())))

    recovered = 0
    for i in range(repeats):
        folder = tmp / f"torn_{i}"
        folder.mkdir()
        (folder / "model_2.pt").write_bytes(good.read_bytes())
        blob = good.read_bytes()
        (folder / "model_3.pt").write_bytes(blob[: rng.randrange(0, len(blob))])
        with contextlib.redirect_stderr(io.StringIO()):
            path, _ = ckpt.load_newest(folder)
        recovered += path.name == "model_2.pt"
    rows.append(("run folder whose newest checkpoint is torn: --resume", repeats,
                 f"{recovered}/{repeats} resumed from the newest checkpoint that verifies"))
    return rows


def learning_fault_rows(tmp: Path, seed: int, repeats: int, rng: random.Random) -> list[Row]:
    """NaN physics in a few quadruped envs; huge and NaN rewards that reach the learner."""
    from rl_core import checkpoint as ckpt

    results = [nan_physics_round(seed + i) for i in range(repeats)]
    good_runs = sum(r["detected"] == r["injected"] and r["iterations"] == 3 and r["finite"] for r in results)
    rows: list[Row] = [("NaN velocities in 1-3 of 8 quadruped envs at a random step (native)", repeats,
                        f"{good_runs}/{repeats} recovered: every injected env detected, reset, masked out of the "
                        "loss; training went on")]
    for reward, label, pattern, outcome in (
            ("1e30", "Huge finite rewards from a random step on (non-finite loss)", r"non-finite .*",
             "that update skipped; no non-finite checkpoint written"),
            ("nan", "NaN rewards from a random step on (masked by the learner)",
             r"[\d.]+% of transitions diverged over the last 10 iterations .*",
             "every NaN transition masked; stopped on the sustained diverged share")):
        stops = 0
        for i in range(repeats):
            folder = tmp / f"badreward_{reward}_{i}"
            proc = nan_learning_run(folder, nan_after=rng.randrange(100, 400), reward=reward)
            line = proc.stderr.strip()
            m = re.fullmatch(r"error: training stopped at iteration (\d+): " + pattern
                             + r"; last good checkpoint: .*model_(\d+)\.pt", line)
            files = list((folder / "checkpoints").glob("model_*.pt"))
            verified = all(ckpt.load(f) is not None for f in files)
            stops += bool(proc.returncode == 2 and m and int(m.group(2)) == int(m.group(1)) - 1 and verified)
        rows.append((label, repeats, f"{stops}/{repeats} stopped with one line naming the iteration "
                     f"and the last good checkpoint; {outcome}"))
    return rows


def kill_rows(tmp: Path, repeats: int, rng: random.Random) -> list[Row]:
    """SIGKILL at a random moment and as soon as a save's temporary file appears, then --resume."""
    rows: list[Row] = []
    for during_save in (False, True):
        kills = [kill_round(tmp / f"killed_{during_save}", resume=i > 0, rng=rng, during_save=during_save)
                 for i in range(repeats)]
        within = sum(r["logged"] - 1 <= r["checkpoint"] <= r["logged"] for r in kills)
        mid = sum(r["mid_save"] for r in kills)
        when = "as soon as a save's temporary file appears" if during_save else "at a random moment"
        rows.append((f"SIGKILL {when} (a save every iteration), then --resume", repeats,
                     f"{within}/{repeats} resumed, at most 1 iteration (one save interval) lost; {mid} of the "
                     "kills left a half-written temporary file (removed by the resume)"))
    return rows


def save_failure_rows(tmp: Path, repeats: int, rng: random.Random) -> list[Row]:
    """Operating-system faults during saves: a full disk, a folder turned read-only, a real full tmpfs."""
    rows: list[Row] = []
    for label, error in (("full disk (torch.save fails part-way)", FULL_DISK),
                         ("run folder became read-only", PermissionError(errno.EROFS, "Read-only file system"))):
        saves = [failing_save_round(tmp / f"save_{label[:4]}_{i}", error, after_saves=rng.randint(1, 4))
                 for i in range(repeats)]
        clean = sum(r["message"].startswith("training stopped at iteration ") and "\n" not in r["message"]
                    and r["message"].endswith(f"last good checkpoint: {r['newest']}") and r["leftovers"] == 0
                    for r in saves)
        rows.append((f"checkpoint save fails: {label}", len(saves),
                     f"{clean}/{len(saves)} stopped with one line naming the file and the last good checkpoint, "
                     "which verifies; no temporary file left"))
    try:
        disks = [disk_full_round(tmp / f"disk_{i}", size_kib=1024) for i in range(max(1, repeats // 3))]
        clean = sum(r["code"] == 2 and "Traceback" not in r["stderr"] and r["leftovers"] == 0
                    and "last good checkpoint: " in r["stderr"].strip().splitlines()[-1] and r["resume_code"] == 0
                    for r in disks)
        rows.append(("disk full during training (1 MiB tmpfs run folder, a save every iteration), then --resume "
                     "from a copy", len(disks),
                     f"{clean}/{len(disks)} exit 2 with one error line and the last good checkpoint; resumed; "
                     "nothing lost beyond the iteration whose save failed"))
    except OSError as e:
        rows.append(("disk full during training (tmpfs)", 0, f"not run: {e}"))
    return rows


def _print_table(rows: list[Row], t0: float, out: Path | None) -> int:
    table = ["| fault | tries | outcome |", "|---|---|---|"] + [f"| {a} | {n} | {o} |" for a, n, o in rows]
    text = "\n".join(table)
    print(text)
    print(f"({time.time() - t0:.0f} s)")
    if out:
        out.write_text(text + "\n")
    return 0


def signal_rows(tmp: Path, repeats: int, rng: random.Random) -> list[Row]:
    """Runs stopped by signals (issue 29): each must exit with 128 + signal, print one line naming the signal, the
    checkpoint of the last iteration logged and the resume command; a third signal exits at once."""
    import os
    import signal

    rows: list[Row] = []
    half = max(1, repeats // 2)
    outcome = ("saved a final checkpoint of the last iteration logged, printed the one line (signal, checkpoint, "
               "resume command) and exited with {code}; nothing lost")
    for label, sig, nohup in (("SIGINT (Ctrl-C)", signal.SIGINT, False), ("SIGTERM (docker stop, Kubernetes, SLURM)",
                               signal.SIGTERM, False),
                              ("SIGINT to a process started with SIGINT ignored (nohup, background job)", signal.SIGINT,
                               True), ("SIGUSR1 (SLURM --signal=USR1@90)", signal.SIGUSR1, False)):
        runs = [tmp / f"{sig.name}_{nohup}_{i}" for i in range(half)]
        clean = sum(clean_stop(signal_round(run, sig, nohup=nohup, rng=rng), sig, run) for run in runs)
        rows.append((f"{label} during training, no periodic save due", half,
                     f"{clean}/{half} " + outcome.format(code=128 + sig)))
        _progress(rows[-1])
    runs = [tmp / f"during_save_{i}" for i in range(repeats)]
    results = [(signal_round(run, signal.SIGTERM, save_interval=1, during_save=True), run) for run in runs]
    clean = sum(clean_stop(r, signal.SIGTERM, run) and r["leftovers"] == 0 for r, run in results)
    rows.append(("SIGTERM as soon as a save's temporary file appears (a save every iteration)", repeats,
                 f"{clean}/{repeats} the save completed and was the final checkpoint; one line; exit 143; no temporary "
                 f"file left ({sum(r['mid_save'] for r, _ in results)} signals sent while the temporary file existed)"))
    _progress(rows[-1])
    saves = [signals_during_save_round(tmp / f"two_{i}", rng) for i in range(repeats)]
    clean = sum(r["stopped_by"] == signal.SIGTERM and r["iteration"] == r["checkpoint"] == 3 and r["leftovers"] == 0
                for r in saves)
    rows.append(("two SIGTERMs at random Python lines of one checkpoint save (in process)", repeats,
                 f"{clean}/{repeats} the save finished (the second signal waited for it), the run stopped after it, "
                 "the checkpoint verifies"))
    _progress(rows[-1])
    os.environ[STEP_SLEEP_ENV] = "0.02"
    threes = [signal_round(tmp / f"three_{i}", signal.SIGTERM, save_interval=1, times=3, delay=rng.uniform(0.0, 0.5),
                           after=1, task="SlowCartPole-v0") for i in range(half)]
    clean = sum(r["code"] == 143 and not r["stop_lines"] and "exiting at once" in r["stderr"]
                and r["checkpoint_path"] == r["newest_file"] for r in threes)
    rows.append(("three SIGTERMs 0.05 s apart within an iteration (a save every iteration)", half,
                 f"{clean}/{half} exited at once with 143; the newest checkpoint verifies (each time)"))
    _progress(rows[-1])
    tries = max(1, repeats // 3)
    ranks = [torchrun_sigterm_round(tmp / f"torchrun_{i}") for i in range(tries)]
    clean = sum(len(r["stop_lines"]) == 1 and int(r["stop_lines"][0].group(2)) == r["checkpoint"] for r in ranks)
    rows.append(("torchrun, 2 gloo ranks: SIGTERM to torchrun", tries,
                 f"{clean}/{tries} every rank stopped, rank 0 saved and printed the one line; all exited within "
                 f"{max(r['seconds'] for r in ranks):.1f} s of the signal"))
    _progress(rows[-1])
    return rows


def _progress(row: Row) -> None:
    print(f"{time.strftime('%H:%M:%S')} {row[0]}: {row[2]}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
