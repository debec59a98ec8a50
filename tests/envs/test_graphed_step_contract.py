"""The CUDA-graphed env step's wiring, run on the CPU with a stand-in for the captured graph (tests/graph_standin.py).

On a GPU with MuJoCo Warp, ``MujocoTask.step`` acts eagerly and replays the task logic (``_finish_step``) as one CUDA
graph whose static buffers are the task state's fields (``MujocoTask.graphed_step``, ``envs/tasks/graphed_step.py``).
A state tensor the step replaces but the graph is not told about, or a step that reads the host, breaks only there.
Here the same wiring runs on Warp's CPU device with a graph stand-in that replays recorded ops on the recorded
memory, and every step must equal the eager env's bit for bit (resets, pushes, resampled commands, terrain
curriculum included). ``tests/rl_core/test_cuda_graphs.py`` runs the real graphs on a GPU.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch

from envs.physics.registry import REGISTRY
from tests import graph_standin

pytestmark = [pytest.mark.warp,
              pytest.mark.skipif(not REGISTRY["warp"].available(), reason="needs warp-lang and mujoco-warp")]

N, STEPS = 8, 30


def make(task: str) -> Any:
    """``task``'s env on Warp's CPU device at the GPU's fixed shapes, with episodes, pushes and command
    resampling short enough to happen within ``STEPS``."""
    from configs.catalog import get_task

    spec = get_task(task)
    cfg: Any = spec.default_config().env
    short: dict[str, Any] = {"num_envs": N, "backend": "warp", "episode_length_s": 0.3}
    if hasattr(cfg, "randomization"):
        short["randomization"] = dataclasses.replace(cfg.randomization, push_interval_s=0.1)
        short["commands"] = dataclasses.replace(cfg.commands, resample_s=0.1)
    env: Any = spec.make_env(dataclasses.replace(cfg, **short), torch.device("cpu"))
    env.fixed_shapes = True  # what a graph needs: no host read of a mask
    return env


def outputs(step: tuple[Any, ...]) -> list[torch.Tensor]:
    """Every tensor a step returned (observation groups, reward, flags, info), in a fixed order."""
    obs, reward, terminated, truncated, info = step
    out = [obs[k] for k in sorted(obs)] + [reward, terminated, truncated, info["invalid"]]
    out += [info["final_obs"][k] for k in sorted(info["final_obs"])] if info.get("final_obs") is not None else []
    return out + [v for _, v in sorted(info.get("log", {}).items())]


@pytest.mark.parametrize("task", ["quadruped-flat", "arm-reach"])
def test_the_graphed_step_replays_the_eager_step(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    graph_standin.install(monkeypatch)
    eager, graphed = make(task), make(task)
    graphed.graphed = graphed.graphed_step()
    a, b = eager.reset(seed=5), graphed.reset(seed=5)
    assert all(torch.equal(a[k], b[k]) for k in a)
    g = torch.Generator().manual_seed(0)
    done = 0
    for t in range(STEPS):
        actions = torch.randn(N, eager.action_spec.n, generator=g)
        reference = eager.step(actions)
        want, got = outputs(reference), outputs(graphed.step(actions.clone()))
        assert len(want) == len(got)
        for i, (x, y) in enumerate(zip(want, got, strict=True)):
            assert torch.equal(x, y), f"step {t}, output {i}: the replayed step differs from the eager one"
        done += int((reference[2] | reference[3]).sum())  # terminated | truncated
    step = graphed.graphed
    assert step is not None and step.captures == 1 and step.graph.replays == STEPS - 1  # the first step eager
    assert done > 0, "no episode ended: the resets were not exercised"


class _Toy:
    """A step that keeps a running sum outside its declared state (``hidden``) and one inside it (``total``)."""

    def __init__(self) -> None:
        self.total, self.hidden = torch.zeros(3), torch.zeros(3)

    def finish(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.total = self.total + x
        self.hidden = self.hidden + x
        return self.total, self.hidden


def test_the_stand_in_freezes_state_the_graph_is_not_told_about(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in can fail: state kept outside the graph's buffers stops accumulating after the capture (as it
    does on a GPU), while declared state goes on."""
    from envs.tasks.graphed_step import GraphedStep

    graph_standin.install(monkeypatch)
    toy = _Toy()
    step = GraphedStep(toy, lambda a: a, toy.finish, ("total",), torch.Generator())
    for _ in range(5):
        total, hidden = step(torch.ones(3))
    assert torch.equal(total, torch.full((3,), 5.0))  # declared: carried from replay to replay
    assert torch.equal(hidden, torch.full((3,), 2.0))  # not declared: frozen at its value of the capture


def test_the_stand_in_refuses_a_host_sync_inside_a_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    from envs.tasks.graphed_step import GraphedStep

    graph_standin.install(monkeypatch)
    toy = _Toy()

    def reads_the_host(x: torch.Tensor) -> torch.Tensor:
        return x * 2 if bool(x.sum() > 0) else x

    step = GraphedStep(toy, lambda a: a, reads_the_host, ("total",), torch.Generator())
    step(torch.ones(3))  # the first step runs eagerly
    with pytest.raises(RuntimeError, match="host sync"):
        step(torch.ones(3))
