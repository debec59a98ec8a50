"""A task assembled from typed parts (``envs/tasks/parts.py``, issue 49): a control step runs the family's parts,
not hooks of its env, so it enters the family's ``env.py`` at most 3 times (``tools/experiments/step_files.py``
counts it; docs/design.md quotes the count); the terminations combine by kind."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from envs.tasks.parts import Events, Report, TaskParts, Termination, nothing

ROOT = Path(__file__).resolve().parents[3]
MOST = 3
"""The most times a control step may enter its family's env module."""


def env_module_entries(task: str) -> tuple[str, int]:
    """The family's env module and how often one traced rollout step entered it (the tool's last line)."""
    out = subprocess.run([sys.executable, "-m", "tools.experiments.step_files", "--task", task],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    m = re.search(r"^(\S+/env\.py) entered (\d+) times$", out.stdout, re.MULTILINE)
    assert m is not None, out.stdout[-2000:]
    return m[1], int(m[2])


def test_a_reaching_step_enters_its_env_module_at_most_3_times():
    module, n = env_module_entries("arm-reach")
    assert module == "envs/tasks/reach/env.py" and n <= MOST, (module, n)


@pytest.mark.slow
@pytest.mark.parametrize("task", ["quadruped-flat", "humanoid-track"])
def test_a_legged_step_enters_its_env_module_at_most_3_times(task):
    module, n = env_module_entries(task)
    assert module.startswith("envs/tasks/") and n <= MOST, (module, n)


def test_terminations_combine_by_kind_in_order() -> None:
    calls: list[str] = []

    def end(name: str, hit: list[bool]) -> Callable[[None], torch.Tensor]:
        def fn(q: None) -> torch.Tensor:
            calls.append(name)
            return torch.tensor(hit)
        return fn

    parts: TaskParts[None, None] = TaskParts(
        view=lambda r: None, measure=lambda v, a: None, reward_context=lambda q, a: None,
        too_fast=lambda qvel: qvel[:, 0] > 1, resample=nothing, observe=lambda v, rows=None, check=True: ({}, None),
        terminations=(Termination("a", "fail", end("a", [True, False, False])),
                      Termination("b", "cut", end("b", [False, True, False])),
                      Termination("c", "fail", end("c", [False, False, True]))),
        events=Events(reset=nothing, after_step=nothing), report=Report(measures=lambda q: {}, metrics=lambda q: {}))
    fail, cut = parts.ended(None, "fail"), parts.ended(None, "cut")
    assert fail is not None and fail.tolist() == [True, False, True]
    assert cut is not None and cut.tolist() == [False, True, False]
    assert calls == ["a", "c", "b"]
    no_ends = dataclasses.replace(parts, terminations=())
    assert no_ends.ended(None, "fail") is None
