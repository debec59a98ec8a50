"""Multi-process training on ``torch.distributed``, launched by ``torchrun`` (NCCL on GPUs, gloo on CPUs).

Every rank steps its own envs (seeded apart) and holds a full copy of the policy. The copies stay identical
because everything that changes them is reduced over the ranks: gradients (averaged per minibatch, before
clipping), the KL that drives the adaptive learning rate, the observation / return normalizer statistics and
the advantage normalization. So a run on W ranks with N envs each learns like one process with W x N envs.
Rank 0 alone logs and saves. Without torchrun every function here is a no-op and nothing is imported.

    torchrun --nproc_per_node=2 train.py --task quadruped-flat ...
"""

from __future__ import annotations

import importlib
import os

import torch
import torch.distributed as dist


def active() -> bool:
    """True inside an initialized process group of more than one rank."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    return dist.get_rank() if active() else 0


def world_size() -> int:
    return dist.get_world_size() if active() else 1


def is_main() -> bool:
    """Rank 0 (or a single process): the one that logs, saves and prints."""
    return rank() == 0


def launched_by_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init_from_environment(device: str) -> str:
    """Join the process group that torchrun describes; returns this rank's device ('cuda' -> 'cuda:LOCAL_RANK')."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device.startswith("cuda"):
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        # torch._dynamo (imported lazily by the first optimizer step) keeps a reference to a process group that
        # exists when it is imported, so destroy_process_group() left gloo's threads running and a rank sometimes
        # died at exit with "terminate called without an active exception" (SIGABRT). Imported first, it does not.
        importlib.import_module("torch._dynamo")

        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return device


def all_reduce_sum_(t: torch.Tensor) -> torch.Tensor:
    """Sum ``t`` over the ranks, in place (no-op in a single process)."""
    if active():
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t


def all_reduce_mean_(t: torch.Tensor) -> torch.Tensor:
    """Average ``t`` over the ranks, in place."""
    if active():
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t.div_(dist.get_world_size())
    return t


def average_gradients_(parameters: list[torch.nn.Parameter]) -> None:
    """Average the gradients of ``parameters`` over the ranks with one all-reduce of a flat buffer."""
    if not active():
        return
    grads = [p.grad for p in parameters if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    all_reduce_mean_(flat)
    offset = 0
    for g in grads:
        n = g.numel()
        g.copy_(flat[offset:offset + n].view_as(g))
        offset += n


def agree_on_stop(signum: int, device: torch.device) -> int:
    """The stop signal any rank received (0: none), the same on every rank: an all-reduce (max) of one number,
    so every rank leaves the training loop at the same iteration and none waits in a collective for the others.
    A single process returns ``signum`` without any device work."""
    if not active():
        return signum
    t = torch.tensor([signum], dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())  # one host sync per iteration, beside the statistics' own


def shutdown() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
