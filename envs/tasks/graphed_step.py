"""The task logic of an env step captured once as a CUDA graph and replayed, around a graph-launched physics step.

A step of a task (e.g. locomotion) is a few hundred small torch ops after the physics (observations, rewards,
terminations, resets, randomization); launched one by one from Python they cost more than the physics itself
at a few thousand envs. Here a step is: ``act(actions)`` eagerly (clip the actions, write the controls, launch
the physics' own graph), then one ``graph.replay()`` of ``finish(clipped_actions)``, the task logic.

Requirements, which the task meets on a GPU: fixed shapes, no host sync, all randomness from one torch
generator (registered with the graph), and a physics backend whose state lives in fixed device memory that
torch reads and writes in place (MuJoCo Warp; not MJX, whose arrays are new every step).

The task's state tensors are re-bound to static buffers: the captured logic ends by copying the new state
into them, so the next replay starts from it. If the task replaces one of them outside a step (a full
``reset()``, loading a checkpoint), the next step re-captures. The tensors a step returns are the graph's own
outputs: valid until the next step overwrites them (the runner and the evaluator copy what they keep).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


class GraphedStep:
    """``finish(act(actions))`` with ``finish`` replayed as a CUDA graph; ``owner.<name>`` for each name in
    ``state`` is task state that ``finish`` may replace."""

    def __init__(self, owner: object, act: Callable[[torch.Tensor], torch.Tensor],
                 finish: Callable[[torch.Tensor], Any], state: tuple[str, ...], generator: torch.Generator):
        self.owner, self.act, self.finish, self.state, self.generator = owner, act, finish, state, generator
        self.graph: torch.cuda.CUDAGraph | None = None
        self._static: dict[str, torch.Tensor] = {}
        self._input: torch.Tensor | None = None
        self._out: Any = None
        self._stream: torch.cuda.Stream | None = None
        self.captures = 0
        """How many times the task logic was captured (a re-capture follows a state replaced outside a step)."""

    def _bound(self, x: torch.Tensor) -> bool:
        """Whether the graph can run: the task's state is still the static buffers, the input has its shape."""
        return (self.graph is not None and self._input is not None and self._input.shape == x.shape
                and all(getattr(self.owner, n) is self._static[n] for n in self.state))

    def _capture(self, x: torch.Tensor) -> None:
        owner, stream = self.owner, self._stream
        assert stream is not None
        self._static = {n: getattr(owner, n).clone() for n in self.state}
        for n, t in self._static.items():
            setattr(owner, n, t)
        self._input = x.clone()
        graph = torch.cuda.CUDAGraph()
        graph.register_generator_state(self.generator)
        stream.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.graph(graph, stream=stream):
            out = self.finish(self._input)
            for n, t in self._static.items():
                t.copy_(getattr(owner, n))
        torch.cuda.current_stream(x.device).wait_stream(stream)
        for n, t in self._static.items():
            setattr(owner, n, t)
        self.graph, self._out = graph, out
        self.captures += 1

    def __call__(self, actions: torch.Tensor) -> Any:
        x = self.act(actions)
        if self._stream is None:
            # The first step's task logic runs eagerly, on the stream that captures later: lazy initializations
            # must not happen inside a capture.
            self._stream = torch.cuda.Stream(x.device)
            current = torch.cuda.current_stream(x.device)
            self._stream.wait_stream(current)
            with torch.cuda.stream(self._stream):
                out = self.finish(x)
            current.wait_stream(self._stream)
            return out
        if not self._bound(x):
            if not hasattr(torch.cuda.CUDAGraph, "register_generator_state"):  # torch < 2.5: no graph-safe generator
                return self.finish(x)
            self._capture(x)
        assert self._input is not None and self.graph is not None
        self._input.copy_(x)
        self.graph.replay()
        return self._out
