"""No module writes task state it does not declare (issue 49): every module that assigns a ``TaskState`` field
names it in its ``WRITES``; a few steps of each family, resets included, record the module of every assignment
(a ``__setattr__`` hook on the family's state class) and check them against the declarations. A family's
``env.py`` declares none: it writes no task state."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import torch

from configs.catalog import get_task
from envs.tasks.base import MujocoTask

ROOT = Path(__file__).resolve().parents[3]
OWN = "envs/tasks/state.py"
"""The state's own methods (``clear``, ``load_state_dict``) write every field."""
TASKS = ("arm-reach", "humanoid-track", "quadruped-rough", "quadruped-flat-proprio")
"""One task of each family, and the locomotion tasks with terrain, heading, privileged critic, history, delay."""


def declared(module: str) -> tuple[str, ...]:
    """``WRITES`` of the module at the relative path ``module`` (none declared: nothing)."""
    name = ".".join(Path(module).with_suffix("").parts)
    return tuple(getattr(importlib.import_module(name), "WRITES", ()))


def undeclared(writes: set[tuple[str, str]]) -> list[str]:
    """``module: field`` of each recorded write the module does not declare."""
    return sorted(f"{m}: {f}" for m, f in writes if m != OWN and f not in declared(m))


def recorded_writes(task: str, monkeypatch: pytest.MonkeyPatch, steps: int = 12) -> set[tuple[str, str]]:
    """(module, field) of every task state assignment in a reset and ``steps`` steps of ``task`` (short episodes:
    resets happen)."""
    spec = get_task(task)
    env_cfg: Any = spec.default_config().env
    env = spec.make_env(dataclasses.replace(env_cfg, num_envs=8, backend="native", episode_length_s=0.1),
                        torch.device("cpu"))
    assert isinstance(env, MujocoTask)
    writes: set[tuple[str, str]] = set()

    def record(state: object, name: str, value: object) -> None:
        frame: FrameType = sys._getframe(1)
        path = Path(frame.f_code.co_filename).resolve()
        writes.add((path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path), name))
        object.__setattr__(state, name, value)

    monkeypatch.setattr(type(env.state), "__setattr__", record)
    env.reset(seed=0)
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        env.step(torch.randn(8, env.action_spec.n, generator=g))
    return writes


@pytest.mark.parametrize("task", TASKS)
def test_every_task_state_write_is_declared_by_its_module(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = recorded_writes(task, monkeypatch)
    assert ("envs/tasks/base.py", "episode_length") in writes and len({m for m, _ in writes}) >= 3, writes
    assert undeclared(writes) == []
    assert not [m for m, _ in writes if m.endswith("/env.py")]


def test_the_check_finds_an_undeclared_write_and_declarations_name_real_fields() -> None:
    assert undeclared({("envs/tasks/locomotion/env.py", "commands"), ("envs/tasks/reach/step.py", "target"),
                       ("envs/tasks/reach/step.py", "last_actions"), (OWN, "target")}) == [
        "envs/tasks/locomotion/env.py: commands", "envs/tasks/reach/step.py: target"]
    from envs.tasks.locomotion import rewards
    from envs.tasks.locomotion.state import LocomotionState
    from envs.tasks.reach.state import ReachState
    from envs.tasks.track.state import TrackState
    locomotion = LocomotionState.merged(*rewards.TERMS.owned_states())  # with the fields its reward terms own
    fields = {n for s in (locomotion, ReachState, TrackState) for n in s.names()}
    writers = [p.relative_to(ROOT).as_posix() for p in (ROOT / "envs/tasks").rglob("*.py")
               if "\nWRITES = " in p.read_text()]
    assert len(writers) >= 10
    assert [(m, f) for m in writers for f in declared(m) if f not in fields] == []
