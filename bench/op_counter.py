"""Counting what a step launches, on the CPU: torch ops (ATen calls at the dispatcher, split by phase) and Warp
kernel launches (split by mujoco_warp source file).

A torch op seen at the dispatcher is, to a good approximation, one kernel on a GPU; view ops (slices, reshapes,
``expand``) and bare allocations launch none and are not counted. Each op is attributed to a phase by the
functions on the Python stack when it ran (``classify``): the task logic an env step replays as one CUDA graph on
a GPU (everything under ``_finish_step``: physics read, kinematics, observation, rewards, terminations, commands,
pushes, resets, metrics, terrain) and the eager rest (``act``: actions to controls and the physics launch; the
runner's ``policy``, ``storage`` and ``runner`` bookkeeping), where every op is a launch from Python on a GPU.
Host syncs (``.item()``, ``bool(tensor)``, ``nonzero``) are counted apart.

The rules name functions and files of this repository, old and new layouts alike (the bench is copied into old
checkouts to bisect), so a rename there may move ops between phases but never loses them (``step body``: ops
written directly in the step function).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parents[1]

GRAPHED_PHASES = ("physics read", "kinematics", "observation", "rewards", "terminations", "commands", "pushes",
                  "resets", "metrics", "terrain", "step body")
"""Phases of the task logic after the physics (one CUDA graph per step on a GPU with MuJoCo Warp)."""
EAGER_PHASES = ("act", "policy", "storage", "runner")
"""Phases launched op by op from Python on a GPU."""

SYNC_OPS = {"aten::_local_scalar_dense", "aten::nonzero", "aten::is_nonzero", "aten::equal", "aten::masked_select",
            "aten::unique_dim", "aten::_unique2", "aten::nonzero_static"}
"""Ops that wait for the device (their result goes to the host or sizes a tensor)."""
FREE_OPS = {"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::detach", "aten::lift_fresh",
            "aten::_unsafe_view", "aten::alias", "aten::set_", "aten::resize_"}
"""Ops that launch no kernel (allocation and aliasing)."""

# Phase markers: (phase, function names, file path parts), checked in this order over every repository frame of
# the op's stack (the first phase with a matching frame wins).
_RULES: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = (
    ("pushes", frozenset({"_push", "push"}), ()),
    ("resets", frozenset({"reset_envs", "_reset_envs", "_restarted", "update_levels", "_reset_all", "reset",
                          "_restart", "_randomize_model"}), ("reach/targets.py",)),
    ("kinematics", frozenset({"kinematics", "_per_body", "tip"}),
     ("locomotion/step.py", "reach/kinematics.py")),
    ("terminations", frozenset({"diverged", "fell", "beyond_bounds", "_diverged", "_too_deep"}),
     ("locomotion/terminations.py",)),
    ("observation", frozenset({"_observed", "_observe"}),
     ("tasks/observations.py", "locomotion/observations.py", "reach/observations.py", "locomotion/observer.py",
      "track/observer.py")),
    ("rewards", frozenset({"_contacts_and_context"}),
     ("locomotion/rewards.py", "locomotion_rewards.py", "tasks/reward_terms.py", "reach/rewards.py")),
    ("commands", frozenset({"_sample_commands", "_steer", "sample", "steer"}), ("locomotion/commands.py",)),
    ("metrics", frozenset({"_duty_difference"}), ("locomotion/metrics.py", "reach/metrics.py", "track/metrics.py")),
    ("terrain", frozenset(), ("envs/terrain/",)),
    ("physics read", frozenset(), ("envs/physics/",)),
)


def _repo_frames(frame: FrameType | None) -> list[tuple[str, str]]:
    """``(path relative to the repository, function)`` of each repository frame, innermost first."""
    out = []
    root = str(ROOT) + "/"
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(root):
            out.append((name[len(root):], frame.f_code.co_name))
        frame = frame.f_back
    return out


def classify(frames: list[tuple[str, str]]) -> str:
    """The phase of an op whose repository stack (innermost first) is ``frames``."""
    funcs = {f for _, f in frames}
    if "_finish_step" not in funcs:  # eager: the env's act, or the runner around the env step
        if any(p.startswith("envs/") for p, _ in frames):  # the env's step outside its task logic
            return "act"
        if any(p.startswith("rl_core/modules/") for p, _ in frames):
            return "policy"
        if any(p.endswith("rl_core/storage.py") for p, _ in frames):
            return "storage"
        return "runner"
    below = frames[:[f for _, f in frames].index("_finish_step")]  # the frames the step function called
    for phase, names, files in _RULES:
        if any(f in names or any(s in p for s in files) for p, f in below):
            return phase
    return "step body"


class OpCounter(TorchDispatchMode):
    """Counts kernel-launching torch ops per phase (``counts``) and host syncs per phase (``syncs``)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.syncs: Counter[str] = Counter()
        self.names: Counter[tuple[str, str]] = Counter()
        """(phase, op name) -> count, for the details of ``--ops``."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func._schema.name
        if not func.is_view and name not in FREE_OPS:
            phase = classify(_repo_frames(sys._getframe(1)))
            self.counts[phase] += 1
            self.names[(phase, name)] += 1
            if name in SYNC_OPS:
                self.syncs[phase] += 1
        return func(*args, **(kwargs or {}))


@contextmanager
def warp_launches() -> Iterator[Counter[str]]:
    """Counts ``wp.launch`` / ``wp.launch_tiled`` calls while active, by the caller's mujoco_warp file (e.g.
    ``solver``); tiled launches count once."""
    import warp as wp

    counts: Counter[str] = Counter()
    originals = {name: getattr(wp, name) for name in ("launch", "launch_tiled")}

    def counted(original: Callable[..., Any]) -> Callable[..., Any]:
        def launch(*args: Any, **kwargs: Any) -> Any:
            counts[Path(sys._getframe(1).f_code.co_filename).stem] += 1
            return original(*args, **kwargs)
        return launch

    for name, fn in originals.items():
        setattr(wp, name, counted(fn))
    try:
        yield counts
    finally:
        for name, fn in originals.items():
            setattr(wp, name, fn)


def per_step(counter: Counter[str], steps: int) -> dict[str, float]:
    """Counts divided by ``steps`` (rounded to 0.01), phases with none left out."""
    return {k: round(v / steps, 2) for k, v in sorted(counter.items()) if v}
