"""docs/design.md's contributor diffs, applied to a copy of the project and stepped: an observation term is two
sites in two files, a stateful reward term two files, and with both the quadruped observes the new term (48 -> 52
columns), logs the new reward and saves the term's state in its checkpoint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DESIGN = ROOT / "docs" / "design.md"
PACKAGES = ("contract", "envs", "rl_core")
"""What a LocomotionEnv imports (copied; the diffs edit two of them)."""


def diff_after(heading: str) -> str:
    """The first ```diff block after the paragraph starting with ``**heading**``."""
    text = DESIGN.read_text()
    start = text.index(f"**{heading}**")
    return text[text.index("```diff\n", start) + len("```diff\n"):text.index("```", text.index("```diff\n", start) + 7)]


def parse(diff: str) -> dict[str, list[str]]:
    """File -> its hunk lines (context ``' '``, ``'+'``, ``'-'``, ``'@@ the end of the file'``)."""
    files: dict[str, list[str]] = {}
    current: list[str] = []
    for line in diff.splitlines():
        if line.startswith("--- a/"):
            continue
        if line.startswith("+++ b/"):
            current = files.setdefault(line[len("+++ b/"):], [])
        else:
            current.append(line)
    return files


def apply(path: Path, hunk: list[str]) -> None:
    """Apply one file's hunk lines: a context line moves the cursor past its match, ``-`` removes the next match,
    ``+`` inserts at the cursor, ``@@ the end of the file`` moves the cursor to the end."""
    lines = path.read_text().splitlines()
    pos = 0
    for h in hunk:
        if h.startswith("@@"):
            assert h == "@@ the end of the file", h
            pos = len(lines)
        elif h.startswith("+"):
            lines.insert(pos, h[1:])
            pos += 1
        else:
            pos = lines.index(h[1:], pos)  # ValueError: the context is not in the file
            if h.startswith("-"):
                del lines[pos]
            else:
                pos += 1
    path.write_text("\n".join(lines) + "\n")


def test_the_diffs_are_two_sites_and_two_files(tmp_path: Path):
    obs = parse(diff_after("An observation term"))
    assert sorted(obs) == ["contract/terms.py", "envs/tasks/locomotion/obs_table.py"]
    blocks = [sum(1 for before, line in zip(["", *h], h, strict=False) if line[0] == "+" and before[:1] != "+")
              for h in obs.values()]
    assert blocks == [1, 1]  # one site in each file: the contract's term, the family's row
    stateful = parse(diff_after("A stateful reward term"))
    assert sorted(stateful) == ["envs/tasks/locomotion/config.py", "envs/tasks/locomotion/rewards.py"]
    f = tmp_path / "f.py"
    f.write_text("a\nb\n")
    apply(f, [" a", "+c", "@@ the end of the file", "+d"])
    assert f.read_text() == "a\nc\nb\nd\n"
    with pytest.raises(ValueError):  # a context the file does not hold fails
        apply(f, [" x", "+y"])


def test_the_diffs_applied_to_a_copy_step(tmp_path: Path):
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    for heading in ("An observation term", "A stateful reward term"):
        for file, hunk in parse(diff_after(heading)).items():
            apply(tmp_path / file, hunk)
    script = (
        "import dataclasses, json, torch\n"
        "from envs.robots.quadruped import QUADRUPED\n"
        "from envs.tasks.locomotion import LocomotionEnv\n"
        "from envs.tasks.locomotion.config import LocomotionEnvConfig\n"
        "cfg = LocomotionEnvConfig(num_envs=4, backend='native')\n"
        "cfg = dataclasses.replace(cfg, rewards=dataclasses.replace(cfg.rewards, feet_swing_peak=-1.0))\n"
        "env = LocomotionEnv(cfg, QUADRUPED)\n"
        "env.reset(seed=0)\n"
        "g = torch.Generator().manual_seed(0)\n"
        "for _ in range(10):\n"
        "    obs, _, _, _, info = env.step(torch.randn(4, env.action_spec.n, generator=g))\n"
        "print(json.dumps({'layout': [n for n, _ in env.obs_layout], 'width': obs['policy'].shape[1],\n"
        "                  'log': sorted(info['log']), 'state': sorted(env.state_dict()['task'])}))\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["layout"][-1] == "foot_contact" and out["width"] == 52  # 48 + one column per foot
    assert "rew_feet_swing_peak" in out["log"] and "swing_peak" in out["state"]
