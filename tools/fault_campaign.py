"""Inject every fault the trainer must survive, many times, and print the fault table (docs/reliability.md).

    python -m tools.fault_campaign [--repeats 10] [--out docs/fault_table.md]

Faults: a bad value for every CLI flag of train.py and play.py and for config overrides; damaged, foreign and
malicious checkpoints (given to play.py and to train.py --resume); NaN physics; NaN learning; SIGKILL at random
moments with a save every iteration (so some kills land inside a save); SIGINT; operating-system faults (a full
disk during a save, a run folder that turns read-only, an unreadable checkpoint); and memory growth over many
iterations. Each row says how often the fault was tried and what came of it. The injections live in
``fault_injection/harness.py``; ``tests/test_faults.py`` runs them with fewer repeats.
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
    sigint_round,
    try_checkpoint,
)


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or '').splitlines()[0])
    p.add_argument("--repeats", type=int, default=10, help="tries of each random fault (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="also write the table (markdown) to this file")
    args = p.parse_args()
    rng = random.Random(args.seed)
    rows: list[tuple[str, int, str]] = []
    t0 = time.time()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        run = make_checkpoint(tmp / "cartpole")
        good = run / "checkpoints" / "model_2.pt"
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
        for script in ("train", "play"):
            n = sum(1 for s, _, _ in CLI_CASES if s == script)
            rows.append((f"{script}.py: a bad value for every flag" + (" and config overrides" if script == "train" else ""),
                         n, f"{ok[script]}/{n} one-line error, exit 2, before any env is built, nothing written"))
        for f in failures:
            print("CLI case failed:", f, file=sys.stderr)

        from rl_core import checkpoint as ckpt

        import torch

        good_sum = ckpt.checksum(torch.load(good, weights_only=True))
        by_kind: dict[str, Counter] = {}
        marker = tmp / "pwned"
        for kind, path in damaged_checkpoints(good, tmp / "damaged", args.repeats, rng, marker):
            by_kind.setdefault(kind, Counter())[try_checkpoint(path, good_sum, tmp / "work", marker)] += 1
        for kind, outcomes in by_kind.items():
            rows.append((f"checkpoint: {kind} (play.py and train.py --resume)", sum(outcomes.values()),
                         ", ".join(f"{n}x {o}" for o, n in outcomes.items())))

        recovered = 0
        for i in range(args.repeats):
            folder = tmp / f"torn_{i}"
            folder.mkdir()
            (folder / "model_2.pt").write_bytes(good.read_bytes())
            blob = good.read_bytes()
            (folder / "model_3.pt").write_bytes(blob[: rng.randrange(0, len(blob))])
            with contextlib.redirect_stderr(io.StringIO()):
                path, _ = ckpt.load_newest(folder)
            recovered += path.name == "model_2.pt"
        rows.append(("run folder whose newest checkpoint is torn: --resume", args.repeats,
                     f"{recovered}/{args.repeats} resumed from the newest checkpoint that verifies"))

        results = [nan_physics_round(args.seed + i) for i in range(args.repeats)]
        good_runs = sum(r["detected"] == r["injected"] and r["iterations"] == 3 and r["finite"] for r in results)
        rows.append(("NaN velocities in 1-3 of 8 quadruped envs at a random step (native)", args.repeats,
                     f"{good_runs}/{args.repeats} recovered: every injected env detected, reset, masked out of the loss; "
                     "training went on"))

        for reward, label, pattern, outcome in (
                ("1e30", "Huge finite rewards from a random step on (non-finite loss)", r"non-finite .*",
                 "that update skipped; no non-finite checkpoint written"),
                ("nan", "NaN rewards from a random step on (masked by the learner)",
                 r"[\d.]+% of transitions diverged over the last 10 iterations .*",
                 "every NaN transition masked; stopped on the sustained diverged share")):
            stops = 0
            for i in range(args.repeats):
                folder = tmp / f"badreward_{reward}_{i}"
                proc = nan_learning_run(folder, nan_after=rng.randrange(100, 400), reward=reward)
                line = proc.stderr.strip()
                m = re.fullmatch(r"error: training stopped at iteration (\d+): " + pattern
                                 + r"; last good checkpoint: .*model_(\d+)\.pt", line)
                files = list((folder / "checkpoints").glob("model_*.pt"))
                verified = all(ckpt.load(f) is not None for f in files)
                stops += bool(proc.returncode == 2 and m and int(m.group(2)) == int(m.group(1)) - 1 and verified)
            rows.append((label, args.repeats, f"{stops}/{args.repeats} stopped with one line naming the iteration "
                         f"and the last good checkpoint; {outcome}"))

        for during_save in (False, True):
            kills = [kill_round(tmp / f"killed_{during_save}", resume=i > 0, rng=rng, during_save=during_save)
                     for i in range(args.repeats)]
            within = sum(r["logged"] - 1 <= r["checkpoint"] <= r["logged"] for r in kills)
            mid = sum(r["mid_save"] for r in kills)
            when = "as soon as a save's temporary file appears" if during_save else "at a random moment"
            rows.append((f"SIGKILL {when} (a save every iteration), then --resume", args.repeats,
                         f"{within}/{args.repeats} resumed, at most 1 iteration (one save interval) lost; {mid} of the "
                         "kills left a half-written temporary file (removed by the resume)"))

        sigints = [sigint_round(tmp / f"sigint_{i}") for i in range(max(1, args.repeats // 2))]
        clean = sum(r["code"] == 130 and r["saved_line"] and r["checkpoint"] >= r["logged"] and "Traceback" not in r["stderr"]
                    for r in sigints)
        rows.append(("SIGINT (Ctrl-C) during training, no periodic save due", len(sigints),
                     f"{clean}/{len(sigints)} saved a final checkpoint of the last iteration and exited with 130; nothing lost"))

        for label, error in (("full disk (torch.save fails part-way)", FULL_DISK),
                             ("run folder became read-only", PermissionError(errno.EROFS, "Read-only file system"))):
            saves = [failing_save_round(tmp / f"save_{label[:4]}_{i}", error, after_saves=rng.randint(1, 4))
                     for i in range(args.repeats)]
            clean = sum(r["message"].startswith("training stopped at iteration ") and "\n" not in r["message"]
                        and r["message"].endswith(f"last good checkpoint: {r['newest']}") and r["leftovers"] == 0
                        for r in saves)
            rows.append((f"checkpoint save fails: {label}", len(saves),
                         f"{clean}/{len(saves)} stopped with one line naming the file and the last good checkpoint, "
                         "which verifies; no temporary file left"))
        try:
            disks = [disk_full_round(tmp / f"disk_{i}", size_kib=1024) for i in range(max(1, args.repeats // 3))]
            clean = sum(r["code"] == 2 and "Traceback" not in r["stderr"] and r["leftovers"] == 0
                        and "last good checkpoint: " in r["stderr"].strip().splitlines()[-1] and r["resume_code"] == 0
                        for r in disks)
            rows.append(("disk full during training (1 MiB tmpfs run folder, a save every iteration), then --resume "
                         "from a copy", len(disks),
                         f"{clean}/{len(disks)} exit 2 with one error line and the last good checkpoint; resumed; "
                         "nothing lost beyond the iteration whose save failed"))
        except OSError as e:
            rows.append(("disk full during training (tmpfs)", 0, f"not run: {e}"))

    growth = rss_growth_mb()
    rows.append(("memory over 200 CartPole iterations after a 100-iteration warm-up", 1, f"RSS grew by {growth:.1f} MiB"))

    table = ["| fault | tries | outcome |", "|---|---|---|"] + [f"| {a} | {n} | {o} |" for a, n, o in rows]
    text = "\n".join(table)
    print(text)
    print(f"({time.time() - t0:.0f} s)")
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
