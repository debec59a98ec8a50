"""One PPO minibatch update (forward, backward, clipping, adaptive lr, the guarded Adam step) as a CUDA graph.

With the small networks of locomotion a minibatch update is a few hundred kernels of a few microseconds each:
launched one by one from Python it is bound by launch overhead, not by the GPU. The update has fixed shapes
and no host sync, so after a warm-up (optimizer state, autograd and cuBLAS initialize lazily, and must not do so
inside a capture) it is captured once and replayed for every minibatch of every later iteration.

Inputs are copied into static buffers: the rollout once per iteration, the minibatch indices once per
minibatch. Once captured, every later update of the same PPO instance must go through the graph (the
parameters' gradients live in its memory pool).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import torch

Minibatch = Callable[[dict[str, torch.Tensor], torch.Tensor], dict[str, torch.Tensor]]


class GraphedMinibatch:
    """Runs ``step(flat, idx) -> metrics`` eagerly for ``warmup`` updates (on a side stream), then as a graph."""

    def __init__(self, step: Minibatch, device: torch.device, warmup: int = 1):
        self.step, self.device, self.warmup = step, device, warmup
        self.graph: torch.cuda.CUDAGraph | None = None
        self._flat: dict[str, torch.Tensor] = {}
        self._idx: torch.Tensor | None = None
        self._metrics: dict[str, torch.Tensor] = {}
        self._side = torch.cuda.Stream(device)
        self.updates = 0

    def _capture(self, idx: torch.Tensor) -> None:
        self._idx = idx.clone()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self._side):  # the warm-up's stream: autograd's nodes live there
            self._metrics = self.step(self._flat, self._idx)
        self.graph = graph

    def run(self, flat: dict[str, torch.Tensor], indices: Iterable[torch.Tensor]) -> Iterator[dict[str, torch.Tensor]]:
        """The metrics of each minibatch in turn (each valid until the next one is requested)."""
        self.updates += 1
        if self.updates <= self.warmup:
            current = torch.cuda.current_stream(self.device)
            for idx in indices:
                self._side.wait_stream(current)
                with torch.cuda.stream(self._side):
                    metrics = self.step(flat, idx)
                current.wait_stream(self._side)
                yield metrics
            return
        if not self._flat:
            self._flat = {k: v.clone() for k, v in flat.items()}
        else:
            for k, v in flat.items():
                self._flat[k].copy_(v)
        for idx in indices:
            if self.graph is None:
                self._capture(idx)
            assert self._idx is not None and self.graph is not None
            self._idx.copy_(idx)
            self.graph.replay()
            yield self._metrics
