"""The benchmark suite: one command, a table, and (with --record) a dated section in bench/RESULTS.md.

    python -m bench [--device cpu|cuda] [--quick] [--record]

1. PPO update of rl_core vs rsl_rl on the same batch (4096 envs x 24 steps, 5 epochs x 4 minibatches), networks
   [128,64,32] and [512,256,128], eager and torch.compile, and the networks' forward + backward alone (the
   floor of any update), with the achieved share of this machine's fp32 matmul peak (bench/ppo_update.py; needs
   `pip install -e ".[bench]"`, skipped without rsl_rl).
2. quadruped-flat env throughput vs raw stepping of its physics backend (bench/env_throughput.py).
3. End-to-end training samples/s of quadruped-flat, collection vs learning, peak memory (bench/end_to_end.py).
4. PPO update of the Atari CNN policy (CleanRL's batch: 8 envs x 128 steps) in samples/s and frames/s, vs a
   plain float32 NCHW reference update (bench/cnn_update.py).
Each runs in its own process, so their memory and threads do not mix.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def machine(device: str) -> str:
    cpu = platform.processor()
    if Path("/proc/cpuinfo").exists():
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), cpu)
    import os

    text = f"{os.cpu_count()}-core {cpu}"
    if device.startswith("cuda"):
        import torch

        text = f"{torch.cuda.get_device_name()} ({text})"
    return text


def run(script: str, args: list[str], out: Path) -> dict | list | None:
    cmd = [sys.executable, "-m", f"bench.{script.removesuffix('.py')}", *args, "--json", str(out)]
    print("$", " ".join(cmd[1:]), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True)
    if proc.returncode != 0:
        print(proc.stdout[-1500:], proc.stderr[-1500:], sep="\n", file=sys.stderr)
        return None
    return json.loads(out.read_text())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="cpu or cuda (the env backend follows: native / mjx)")
    p.add_argument("--quick", action="store_true", help="fewer repeats and iterations (a smoke run)")
    p.add_argument("--record", action="store_true", help="append the table to bench/RESULTS.md")
    args = p.parse_args()
    rows: list[tuple[str, str, str]] = []
    repeats = "1" if args.quick else "3"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if find_spec("rsl_rl") is not None:
            for hidden in ("128,64,32", "512,256,128"):
                r = run("ppo_update.py", ["--hidden", hidden, "--repeats", repeats, "--device", args.device,
                                          "--compile", "--floor"], tmp / f"ppo_{hidden}.json")
                if r:
                    res = r["results"]
                    rows.append((f"PPO update [{hidden}], rl_core / rl_core+compile / rsl_rl / networks only",
                                 " / ".join(f"{res[k]['median_s']:.2f} s"
                                            for k in ("rl_core", "rl_core+compile", "rsl_rl", "networks only")),
                                 f"rsl_rl / rl_core {r['ratios']['rl_core']:.2f}x, / compiled "
                                 f"{r['ratios']['rl_core+compile']:.2f}x, / networks only (the ceiling) "
                                 f"{r['ratios']['networks only']:.2f}x; rl_core at "
                                 f"{res['rl_core']['pct_of_peak']:.0f}% "
                                 f"(compiled {res['rl_core+compile']['pct_of_peak']:.0f}%) of the "
                                 f"{r['peak_gflops']:.0f} GFLOP/s matmul peak"))
        else:
            rows.append(("PPO update vs rsl_rl", "skipped", 'rsl_rl is not installed: pip install -e ".[bench]"'))
        import torch

        from envs.physics.factory import resolve_backend

        backend = resolve_backend("auto", torch.device(args.device))
        envs = "4096" if args.device.startswith("cuda") else "1024"
        r = run("env_throughput.py", ["--backend", backend, "--device", args.device, "--num-envs", envs, "--steps",
                                      "20" if args.quick else "50"], tmp / "env.json")
        if r:
            e = r[0]
            rows.append((f"quadruped-flat env, {backend}, {envs} envs", f"{e['env_samples_per_s']:,.0f} samples/s",
                         f"env / raw physics {e['env_over_raw_control_steps']:.2f} "
                         f"(raw {e['raw_physics_steps_per_s']:,.0f} physics steps/s)"))
        r = run("end_to_end.py", ["--device", args.device, "--iterations", "3" if args.quick else "10"],
                tmp / "e2e.json")
        if r:
            mem = f"peak RSS {r['peak_rss_mib']:.0f} MiB" + (
                f", peak CUDA {r['peak_cuda_mib']:.0f} MiB" if r["peak_cuda_mib"] is not None else "")
            rows.append((f"quadruped-flat training, {r['num_envs']} envs x {r['steps_per_env']} steps",
                         f"{r['samples_per_s']:,.0f} samples/s",
                         f"collection {r['collection_s']:.2f} s + learning {r['learning_s']:.2f} s per iteration"
                         + (f"; physics {r['physics_share']:.0%}, PPO update {r['learning_share']:.0%}, everything "
                            f"else {r['other_share']:.0%}" if r.get("physics_share") else "") + f"; {mem}"))
        r = run("cnn_update.py", ["--device", args.device, "--repeats", repeats], tmp / "cnn.json")
        if r:
            res = r["results"]
            rows.append(("Atari CNN PPO update, 8 envs x 128 steps, 4 epochs x 4 minibatches",
                         f"{res['rl_core']['frames_per_s']:,.0f} frames/s "
                         f"({res['rl_core']['samples_per_s']:,.0f} samples/s)",
                         f"reference / rl_core {r['ratios']['rl_core']:.2f}x; frames stored as uint8: "
                         f"{r['storage_mib']['uint8']:.0f} MiB vs {r['storage_mib']['float32']:.0f} MiB as float32"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    header = (f"Machine: {machine(args.device)}; {datetime.date.today()}; commit {commit}"
              f"; `python -m bench --device {args.device}{' --quick' if args.quick else ''}`")
    table = [header, "", "| benchmark | result | ratio / split |", "|---|---|---|"] + [
        f"| {a} | {b} | {c} |" for a, b, c in rows]
    print("\n".join(table))
    if args.record:
        with (ROOT / "bench" / "RESULTS.md").open("a") as f:
            f.write("\n## `python -m bench`\n\n" + "\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
