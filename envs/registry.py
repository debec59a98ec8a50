"""Task registry: task name -> env factory and default config. Any Gymnasium id works without registering.

A user's own file registers without editing the project: ``--task path/to/my_robot.py:flat`` imports that file
and takes its module-level ``flat`` (a ``TaskSpec``, e.g. ``configs.locomotion.flat_task(...)``, or a function
returning one). The task is registered under the full ``path:name`` string, which is what checkpoints record,
so ``play.py --checkpoint`` finds it again (relative paths: from the current directory).

This module never imports ``configs`` (which imports it): the catalog of tasks by name, built-in ones included,
is ``configs/catalog.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from contract.errors import UserError
from envs.file_errors import import_error, location, spec_problems, with_line
from envs.robots.spec import RobotSpec
from rl_core.config import EnvConfig, TrainConfig
from rl_core.env_api import VecEnv


@dataclass(frozen=True)
class TaskSpec:
    """A trainable task: how to build its env and its default (tuned) config."""

    name: str
    """Name used on the command line (``--task``)."""
    make_env: Callable[[EnvConfig, torch.device], VecEnv]
    """Builds the batched env from the env section of the config on the given device."""
    default_config: Callable[[], TrainConfig]
    """Returns the task's default config (a fresh instance)."""
    description: str = ""
    """One line for ``train.py --list-tasks``."""
    check_dependencies: Callable[[], None] | None = None
    """Raises a one-line UserError when a package the task needs is missing (train.py calls it before it writes
    anything)."""
    validate: Callable[[EnvConfig], None] | None = None
    """Checks the task's own inputs for the given env config (a robot spec against its MJCF) and raises a one-line
    UserError; train.py calls it before it writes anything."""
    machine_defaults: Callable[[bool], TrainConfig] | None = None
    """The default config on a machine with (True) or without (False) a GPU, for tasks whose defaults depend on
    it; ``train.py --help`` and config.yaml name the fields that differ (``configs/machine.py``)."""
    robot: RobotSpec | None = None
    """The robot of a task whose env builds it its own way (a tracking task: every joint trained); the robot check
    (``envs/robot_check/verdict.py``) builds it from this."""


_REGISTRY: dict[str, TaskSpec] = {}


def register(spec: TaskSpec) -> TaskSpec:
    """Add a task; a second task of the same name is an error."""
    if spec.name in _REGISTRY:
        raise ValueError(f"task '{spec.name}' is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def remember(spec: TaskSpec) -> TaskSpec:
    """Register a task resolved from its name (a user file's ``path.py:attr``, ``menagerie:NAME``), replacing an
    earlier resolution of the same name."""
    _REGISTRY[spec.name] = spec
    return spec


def registered_so_far() -> dict[str, TaskSpec]:
    """The tasks registered until now (the built-in ones once ``configs`` is imported: ``configs.catalog``)."""
    return dict(_REGISTRY)


def is_file_task(name: str) -> bool:
    """``path/to/file.py:attribute``."""
    path, sep, attr = name.rpartition(":")
    return bool(sep) and path.endswith(".py") and attr.isidentifier()


def load_file_module(ref: str) -> Any:
    """The imported module of ``path.py`` of ``path.py:attr`` (imported once; the one-line errors of
    ``load_file_task``)."""
    path_text, _, _ = ref.rpartition(":")
    path = Path(path_text)
    if not path.is_file():
        raise UserError(f"--task {ref}: file {path} does not exist")
    module_name = "legged_mjx_task_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses defined in the file look their module up here
        try:
            spec.loader.exec_module(module)
        except UserError as e:  # a check inside the file's own code (a spec's): prefixed with the file's line
            del sys.modules[module_name]
            raise UserError(f"--task {ref}: {location(path, e)}: {e}") from e
        except BaseException as e:  # the user's code: any error, SyntaxError and SystemExit included
            del sys.modules[module_name]
            # chained, so that --debug shows the user's frames (the one line names the file's line and field)
            raise UserError(f"--task {ref}: {import_error(path, e)}") from e
        problem = spec_problems(path, vars(module), RobotSpec)
        if problem is not None:
            del sys.modules[module_name]
            raise UserError(f"--task {ref}: {problem}")
    return module


def own_task_or_sole_spec(ref: str, task: str, define: str) -> TaskSpec | RobotSpec:
    """``path.py:TASK`` for a suffix the file may leave out (``deploy``, ``track``): the file's own task of that
    name, else the one ``RobotSpec`` it defines (the caller builds the task); one line when it defines none or
    several (``define``: how to write the task in the file)."""
    module = load_file_module(ref)
    if getattr(module, task, None) is not None:
        return load_file_task(ref)
    specs = {k: v for k, v in vars(module).items() if isinstance(v, RobotSpec)}
    if len(specs) != 1:
        raise UserError(f"--task {ref}: the file has no task {task!r} and {len(specs)} robot specs "
                        f"({', '.join(specs) or 'none'}); the {task} task needs one, or define {define} in it")
    return next(iter(specs.values()))


def load_file_task(ref: str) -> TaskSpec:
    """Import ``path.py`` of ``path.py:attr`` and register its ``attr`` (a TaskSpec or a function returning one)
    under the name ``ref``. One-line errors: missing file, a file that does not import (its line, and the spec
    field when a value has the wrong type: ``envs/file_errors.py``), no such task in it. Spec errors raised later
    by the task's ``validate`` start with the file's line of the field."""
    path_text, _, attr = ref.rpartition(":")
    path = Path(path_text)
    module = load_file_module(ref)
    task = getattr(module, attr, None)
    if callable(task) and not isinstance(task, TaskSpec):
        task = task()
    if not isinstance(task, TaskSpec):
        found = [k for k, v in vars(module).items() if isinstance(v, TaskSpec)]
        raise UserError(f"--task {ref}: {path} has no task '{attr}' "
                        f"(a TaskSpec, e.g. configs.locomotion.flat_task(...)); "
                        f"its tasks: {', '.join(found) or '(none)'}")
    task = replace(task, name=ref, validate=_placed(task.validate, path, vars(module)))
    _REGISTRY[ref] = task
    return task


def _placed(validate: Callable[[EnvConfig], None] | None, path: Path,
            module_vars: dict) -> Callable[[EnvConfig], None] | None:
    """``validate`` whose spec errors start with the file's line of the field (``envs/file_errors.py``)."""
    if validate is None:
        return None
    inner = validate

    def placed(cfg: EnvConfig) -> None:
        try:
            inner(cfg)
        except UserError as e:
            raise UserError(with_line(str(e), path, module_vars, RobotSpec)) from e

    return placed
