"""SHA-256 of what short seeded trainings learned: run it on two checkouts to show a learner change is bit-identical.

    python -m tools.experiments.learner_hash                                  # this checkout, every configuration
    python -m tools.experiments.learner_hash --checkout /path/to/other --python /path/to/other/.venv/bin/python
    python -m tools.experiments.learner_hash --only cartpole quadruped        # some configurations

Each configuration runs the checkout's ``train.py`` for 2 iterations (seed 1, CPU) and hashes its checkpoint (the
policy and its normalizers, the optimizer state and learning rate, the RNG states, episode statistics, the
recurrent state; not the config, paths or wall time) and the numbers of its console lines (timings removed). The
configurations cover PPO with the adaptive, linear and fixed schedules, symmetry augmentation, LSTM and GRU memories,
the squashed Gaussian, reward normalization, per-network clipping, a target-KL stop, and distillation (MLP and GRU
students of the first configuration's policy).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

QUADRUPED = ["--task", "quadruped-flat", "--num-envs", "64"]
DISTILL = [*QUADRUPED, "algorithm.name=distillation", "algorithm.teacher={teacher}", "algorithm.teacher_obs=policy"]
CONFIGS: dict[str, list[str]] = {
    "quadruped": QUADRUPED,
    "quadruped-symmetry-linear": [*QUADRUPED, "algorithm.symmetry=augment", "algorithm.schedule=linear"],
    "quadruped-gru": [*QUADRUPED, "policy.memory=gru"],
    "cartpole": ["--task", "CartPole-v1"],
    "cartpole-lstm-target-kl": ["--task", "CartPole-v1", "policy.memory=lstm", "algorithm.target_kl=0.001"],
    "pendulum-squashed": ["--task", "Pendulum-v1", "policy.distribution=squashed_gaussian",
                          "algorithm.normalize_rewards=true", "algorithm.clip_grad_per_network=true"],
    "distill": [*DISTILL, "algorithm.schedule=fixed"],
    "distill-gru-linear": [*DISTILL, "policy.memory=gru", "algorithm.schedule=linear"],
}
"""Name -> train.py arguments (``{teacher}``: the first configuration's checkpoint)."""

HASHED = ("iteration", "env_steps", "policy", "algorithm", "reward_normalizer", "generator", "torch_rng", "episode",
          "env", "obs", "hidden")
"""The checkpoint entries that learning writes (``config`` and ``wall_time_s`` are left out)."""

_TIMINGS = re.compile(r"\s*[\d,.]+ sps \(collect [\d.]+s learn [\d.]+s\)|eta \d\d:\d\d")


def feed(digest: Any, value: Any) -> None:
    """Add ``value`` (nested dicts, lists, tensors, numbers) to ``digest``; strings (paths, names) are skipped."""
    if isinstance(value, torch.Tensor):
        digest.update(f"{value.dtype}{tuple(value.shape)}".encode())
        digest.update(value.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes()
                      if value.numel() else b"")
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            digest.update(str(k).encode())
            feed(digest, value[k])
    elif isinstance(value, (list, tuple)):
        for v in value:
            feed(digest, v)
    elif not isinstance(value, str):
        digest.update(repr(value).encode())


def console_numbers(text: str) -> str:
    """The per-iteration console lines without their timings."""
    return "\n".join(_TIMINGS.sub("", line) for line in text.splitlines() if line.startswith("it "))


def run(checkout: Path, python: str, name: str, work: Path, teacher: Path) -> tuple[str, Path]:
    """Train configuration ``name`` with the checkout's train.py; its hash and its newest checkpoint."""
    argv = [a.format(teacher=teacher) for a in CONFIGS[name]]
    run_dir = work / name
    proc = subprocess.run([python, "train.py", *argv, "--max-iterations", "2", "--seed", "1", "--device", "cpu",
                           "--run-dir", str(run_dir)], cwd=checkout, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: train.py exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
    path = max((run_dir / "checkpoints").glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    data = torch.load(path, map_location="cpu", weights_only=True)
    digest = hashlib.sha256(console_numbers(proc.stdout).encode())
    for key in HASHED:
        digest.update(key.encode())
        feed(digest, data.get(key))
    return digest.hexdigest(), path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the checkout whose train.py runs (default: this one)")
    parser.add_argument("--python", default=sys.executable, help="its Python (default: this one)")
    parser.add_argument("--only", nargs="+", choices=list(CONFIGS), help="these configurations (default: all)")
    args = parser.parse_args()
    names = args.only or list(CONFIGS)
    total = hashlib.sha256()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        teacher = work / "teacher.pt"
        for name in names:
            if "{teacher}" in " ".join(CONFIGS[name]) and not teacher.exists():
                teacher.write_bytes(run(args.checkout, args.python, "quadruped", work / "for_teacher", teacher)[1]
                                    .read_bytes())
            h, _ = run(args.checkout, args.python, name, work, teacher)
            total.update(h.encode())
            print(f"{name:28s} {h}", flush=True)
    print(f"{'all of the above':28s} {total.hexdigest()}")


if __name__ == "__main__":
    main()
