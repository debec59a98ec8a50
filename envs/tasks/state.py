"""Per-env task state, declared once: allocation, reset, checkpointing and the CUDA graph's buffers follow.

A task declares its state as a dataclass of tensors whose fields carry ``per_env(...)``: the shape of one env's
value (numbers, or size names the task resolves, e.g. ``"joints"``), the element type and what a reset does:

    @dataclass(eq=False)
    class ReachState(TaskState):
        target: torch.Tensor = per_env(3, reset="task")
        \"\"\"Where the hand should go (m, world frame); drawn by the task at each reset.\"\"\"
        last_actions: torch.Tensor = per_env("joints")
        \"\"\"The previous step's actions; zero after a reset.\"\"\"

``ReachState.allocate(num_envs, {"joints": 7}, device)`` gives every field zeros. ``clear(mask)`` resets the
``"zero"`` and ``"zero_finite"`` fields of the masked envs (``"task"`` fields are the task's to draw);
``state_dict`` / ``load_state_dict`` save and restore every field by name; ``names()`` lists them for
``graphed_step.GraphedStep``, which re-binds them to static buffers. A field added here is therefore saved,
resumed, reset and replayed without another edit. A term may own fields of its own (a ``TaskState`` dataclass
beside the term): ``merged`` appends them to the family's state, which treats them as its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import torch

Reset = Literal["zero", "zero_finite", "task"]
"""What a reset does to a field: ``zero``: zero (False) for the masked envs; ``zero_finite``: the same, after
non-finite values anywhere are replaced by zero (a value read from a diverged state, NaN * 0 being NaN, would
otherwise carry into the next episode); ``task``: nothing here, the task draws it."""


@dataclass(frozen=True)
class PerEnv:
    """How one state field is laid out and reset."""

    shape: tuple[int | str, ...]
    """Shape of one env's value: numbers, or names of sizes the task gives to ``allocate``."""
    dtype: torch.dtype
    """Element type."""
    reset: Reset
    """What a reset does (``Reset``)."""


def per_env(*shape: int | str, dtype: torch.dtype = torch.float32, reset: Reset = "zero") -> Any:
    """A state field of the given per-env shape (a dataclass field; its value is set by ``allocate``)."""
    return field(default=None, metadata={"per_env": PerEnv(tuple(shape), dtype, reset)})


S = TypeVar("S", bound="TaskState")


@dataclass(eq=False)
class TaskState:
    """Base of a task's state dataclass (see the module docstring); every field is ``[num_envs, *shape]``. Every
    task declares ``episode_length`` (``per_env(dtype=torch.long)``: control steps since the episode began), which
    the base's step advances and its time limit reads."""

    if TYPE_CHECKING:  # declared by each task, where it sits in its checkpoint's order
        episode_length: torch.Tensor

    @classmethod
    def layout(cls) -> dict[str, PerEnv]:
        """Field name -> its layout, in declaration order."""
        return {f.name: f.metadata["per_env"] for f in fields(cls) if "per_env" in f.metadata}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(cls.layout())

    @classmethod
    def merged(cls: type[S], *owned: type[TaskState]) -> type[S]:
        """This state with the fields that terms own appended (each ``owned`` a ``TaskState`` dataclass of a term's
        fields, e.g. a reward term's clocks: ``envs/tasks/reward_terms.StatefulTerm``), in order: one dataclass, so
        allocation, resets, checkpoints (by name) and the CUDA graph's buffers see every field. A name declared
        twice is a ValueError."""
        if not owned:
            return cls
        seen = list(cls.names())
        for state in owned:
            twice = [n for n in state.names() if n in seen]
            if twice:
                raise ValueError(f"task state field(s) {', '.join(twice)} of {state.__name__} are declared twice")
            seen += state.names()
        bases = (*reversed(owned), cls)  # dataclass fields gather from the last base: the family's first
        merged: type[S] = dataclass(eq=False)(type(cls.__name__, bases, {"__doc__": cls.__doc__}))
        assert merged.names() == tuple(seen)  # the family's fields, then each term's
        return merged

    @classmethod
    def allocate(cls: type[S], num_envs: int, sizes: dict[str, int], device: torch.device) -> S:
        """Every field zero (False), sized by ``sizes`` for the named dimensions."""
        values = {}
        for name, spec in cls.layout().items():
            shape = [sizes[d] if isinstance(d, str) else d for d in spec.shape]
            values[name] = torch.zeros(num_envs, *shape, dtype=spec.dtype, device=device)
        return cls(**values)

    def clear(self, mask: torch.Tensor) -> None:
        """Reset the ``zero`` / ``zero_finite`` fields of the masked envs, out of place (a field may alias a
        physics readout) and at fixed shapes (no host sync)."""
        keep_env = ~mask  # once for every field (views below)
        for name, spec in self.layout().items():
            if spec.reset == "task":
                continue
            value = getattr(self, name)
            keep = keep_env if value.dim() == 1 else keep_env.view(-1, *([1] * (value.dim() - 1)))
            if spec.reset == "zero_finite":
                value = torch.nan_to_num(value)
            setattr(self, name, value & keep if value.dtype == torch.bool else value * keep)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """A copy of every field, on the CPU (never the live tensor: a CPU env steps its fields in place)."""
        return {name: getattr(self, name).detach().cpu().clone() for name in self.names()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore the saved fields (copies); a field newer than the checkpoint keeps its current (reset) value."""
        for name in self.names():
            if name in state:
                setattr(self, name, state[name].to(getattr(self, name).device, copy=True))
