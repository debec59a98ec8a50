"""The whole env step (physics substeps + torch task logic) captured once as a CUDA graph and replayed.

A step of the locomotion task is a few hundred small torch ops around the physics; launched one by one they
cost more than the physics itself at a few thousand envs. Captured, one ``graph.replay()`` launches them all.
Requirements, which the task meets on a GPU: fixed shapes, no host sync, all randomness from one registered
torch generator, and a physics backend that can record into torch's capture (MuJoCo Warp can; JAX cannot).

The task's state tensors are re-bound to static buffers: the captured step ends by copying the new state
into them, so the next replay starts from it. If the task replaces one of them outside a step (a full
``reset()``, loading a checkpoint), the next step re-captures. The tensors a step returns are the graph's
own outputs: valid until the next step overwrites them (the runner copies what it keeps).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Step = Callable[[torch.Tensor], Any]


class GraphedStep:
    """Replays ``step(actions)`` as a CUDA graph; ``owner.<name>`` for each of ``state`` is the task state it carries."""

    def __init__(self, owner: object, step: Step, state: tuple[str, ...], generator: torch.Generator):
        self.owner, self.step, self.state, self.generator = owner, step, state, generator
        self.graph: torch.cuda.CUDAGraph | None = None
        self._static: dict[str, torch.Tensor] = {}
        self._actions: torch.Tensor | None = None
        self._out: Any = None
        self._warm = False
        self.captures = 0
        """How many times the step was captured (a re-capture follows a state replaced outside a step)."""

    def _bound(self) -> bool:
        return all(getattr(self.owner, n) is self._static.get(n) for n in self.state)

    def _capture(self, actions: torch.Tensor) -> None:
        owner = self.owner
        self._static = {n: getattr(owner, n).clone() for n in self.state}
        for n, t in self._static.items():
            setattr(owner, n, t)
        self._actions = actions.detach().clone()
        graph = torch.cuda.CUDAGraph()
        graph.register_generator_state(self.generator)
        stream = torch.cuda.Stream(actions.device)
        stream.wait_stream(torch.cuda.current_stream(actions.device))
        # thread_local: the mode Warp assumes for a capture it joins (external=True).
        with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
            out = self.step(self._actions)
            for n, t in self._static.items():
                t.copy_(getattr(owner, n))
        torch.cuda.current_stream(actions.device).wait_stream(stream)
        for n, t in self._static.items():
            setattr(owner, n, t)
        self.graph, self._out = graph, out
        self.captures += 1

    def __call__(self, actions: torch.Tensor) -> Any:
        if not self._warm:  # the first step runs eagerly: lazy initializations must not happen inside a capture
            self._warm = True
            return self.step(actions)
        if self.graph is None or not self._bound() or actions.shape != self._actions.shape:  # type: ignore[union-attr]
            self._capture(actions)
        assert self._actions is not None and self.graph is not None
        self._actions.copy_(actions)
        self.graph.replay()
        return self._out
