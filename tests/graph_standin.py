"""A CUDA graph's semantics on the CPU, for contract tests of code that a GPU captures (``install`` patches
``torch.cuda``'s graph and stream API with these stand-ins).

A CUDA graph replays the kernels it captured on the memory they used at capture: no Python runs, every tensor the
captured code made is rewritten in place, and an attribute the code *replaced* with a new tensor keeps the tensor of
capture time, which no replay updates from Python again (it is frozen). ``StandInGraph`` does the same with torch ops:

- capture records every op the code dispatches (a ``TorchDispatchMode``), refuses host syncs (a CUDA capture fails
  on them) and leaves memory and the registered random generators as they were (a CUDA capture runs nothing);
- replay runs the recorded ops again on the recorded tensors, an in-place op on its own target, any other op's fresh
  result copied into the tensor it returned at capture.

So a task whose step keeps state outside the buffers the graph is told about gives other numbers replayed than
eager, as it would on a GPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

SYNC_OPS = {"aten::_local_scalar_dense", "aten::nonzero", "aten::is_nonzero", "aten::equal", "aten::masked_select"}
"""Ops a CUDA capture fails on (their result must reach the host)."""


def _written(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The tensors an op writes into (in-place and ``out=`` arguments)."""
    out = []
    for i, arg in enumerate(func._schema.arguments):
        if arg.alias_info is not None and arg.alias_info.is_write:
            value = args[i] if i < len(args) else kwargs.get(arg.name)
            out += [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]
    return out


class _Recorder(TorchDispatchMode):
    """Records the ops of a capture; keeps what each write overwrites, to put memory back afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[tuple[Any, tuple[Any, ...], dict[str, Any], Any, bool]] = []
        self.saved: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func._schema.name in SYNC_OPS:
            raise RuntimeError(f"a host sync ({func._schema.name}) inside a captured CUDA graph")
        written = _written(func, args, kwargs)
        for t in written:
            self.saved.setdefault(id(t), (t, t.clone()))
        out = func(*args, **kwargs)
        if not func.is_view:
            self.ops.append((func, args, kwargs, out, bool(written)))
        return out


class StandInGraph:
    """``torch.cuda.CUDAGraph`` on the CPU (see the module docstring)."""

    def __init__(self) -> None:
        self.ops: list[tuple[Any, tuple[Any, ...], dict[str, Any], Any, bool]] = []
        self.generators: list[torch.Generator] = []
        self.replays = 0

    def register_generator_state(self, generator: torch.Generator) -> None:
        self.generators.append(generator)

    @contextmanager
    def capturing(self) -> Iterator[None]:
        states = [g.get_state() for g in self.generators]
        recorder = _Recorder()
        with recorder:
            yield
        with torch.no_grad():  # a capture runs nothing
            for t, before in recorder.saved.values():
                t.copy_(before)
        for g, s in zip(self.generators, states, strict=True):
            g.set_state(s)
        self.ops = recorder.ops

    @torch.no_grad()  # the recorded ops are below autograd already (a backward's own ops among them)
    def replay(self) -> None:
        self.replays += 1
        for func, args, kwargs, out, in_place in self.ops:
            fresh = func(*args, **kwargs)
            if in_place:
                continue
            for mine, new in zip(tree_flatten(out)[0], tree_flatten(fresh)[0], strict=True):
                if isinstance(mine, torch.Tensor):
                    mine.copy_(new)


class _Stream:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def wait_stream(self, other: Any) -> None:
        pass


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patch ``torch.cuda``'s graph and stream API with the stand-ins, for code running on the CPU."""
    monkeypatch.setattr(torch.cuda, "CUDAGraph", StandInGraph)
    monkeypatch.setattr(torch.cuda, "graph", lambda graph, stream=None, **kw: graph.capturing())
    monkeypatch.setattr(torch.cuda, "Stream", _Stream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a, **k: _Stream())
    monkeypatch.setattr(torch.cuda, "stream", lambda s: nullcontext())
