"""What PPO and distillation share: the optimizer and its learning rate, the guarded step, the per-iteration means.

The learning rate is a 0-d tensor that the fused Adam reads in place, so a schedule that changes it on the device
(PPO's adaptive rule) never syncs the host. The step is guarded on the device too: where the loss or the gradient
is not finite, the fused kernel leaves the parameters and the optimizer state untouched (``found_inf``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

import torch
from torch import nn

from rl_core.config import AlgorithmConfig
from rl_core.stacked_sums import StackedSums


def iteration_means(sums: dict[str, torch.Tensor], count: int, lr: torch.Tensor) -> dict[str, torch.Tensor]:
    """An update's result: the means over its ``count`` minibatches of the summed metrics, the learning rate, the
    number of minibatch updates and of non-finite ones (on device, no sync)."""
    nonfinite = sums.pop("nonfinite")
    out = {k: v / count for k, v in sums.items()}
    out["learning_rate"] = lr.clone()
    out["num_minibatch_updates"] = torch.tensor(float(count))
    out["nonfinite_updates"] = nonfinite
    return out


class Learner:
    """Owns the Adam optimizer of ``params`` and the learning rate ``lr``; subclasses add the loss and ``update``."""

    LOG_NAMES: ClassVar[dict[str, str]]
    """TensorBoard name -> key of ``update``'s result (the runner logs these; tools read these names)."""

    def __init__(self, params: list[nn.Parameter], cfg: AlgorithmConfig, total_iterations: int, device: torch.device):
        self.cfg, self.total_iterations = cfg, total_iterations
        self.lr = torch.tensor(cfg.learning_rate, dtype=torch.float32, device=device)
        # capturable on a GPU: the step counts live on the device, so a CUDA graph can replay the update.
        self.optimizer = torch.optim.Adam(params, lr=self.lr, eps=cfg.adam_eps, fused=True,
                                          capturable=device.type == "cuda")
        # Read by the fused Adam kernel (as with a GradScaler): where it is non-zero the step leaves the parameters
        # and the optimizer state untouched, decided on the device with no host sync.
        self.found_inf = torch.zeros((), device=device)
        self.optimizer.found_inf = self.found_inf  # type: ignore[attr-defined]  # read by the fused kernel

    def set_iteration(self, iteration: int) -> None:
        """Apply the linear schedule for ``iteration`` (fixed and adaptive keep their own lr)."""
        if self.cfg.schedule == "linear":
            frac = 1.0 - iteration / max(1, self.total_iterations)
            self.lr.fill_(max(self.cfg.learning_rate * frac, 0.0))

    def _guarded_step(self, loss: torch.Tensor, grad_norm: torch.Tensor) -> torch.Tensor:
        """The Adam step, skipped on the device when ``loss`` or ``grad_norm`` is not finite; returns 1.0 where it
        was skipped (no host sync)."""
        bad = ~(torch.isfinite(loss) & torch.isfinite(grad_norm))
        self.found_inf.copy_(bad)
        self.optimizer.step()
        return bad.float()

    def _means(self, steps: Iterable[dict[str, torch.Tensor]],
               stop: Callable[[dict[str, torch.Tensor]], bool] | None = None) -> dict[str, torch.Tensor]:
        """Run the minibatch ``steps`` (each yields its metrics, valid until the next one is requested) and return
        ``iteration_means`` of them; ``stop(metrics)`` true ends the update after that minibatch."""
        sums = StackedSums()  # one add per minibatch for all metrics (each an eager launch on a GPU)
        count = 0
        for metrics in steps:
            sums.add(metrics)
            count += 1
            if stop is not None and stop(metrics):
                break
        return iteration_means(sums.totals(), count, self.lr)

    # -- checkpoint
    def state_dict(self) -> dict:
        return {"optimizer": self.optimizer.state_dict(), "lr": float(self.lr)}

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        # load_state_dict replaces the lr in param_groups; point it back at our tensor.
        self.lr.fill_(state["lr"])
        for g in self.optimizer.param_groups:
            g["lr"] = self.lr
            g["capturable"] = self.lr.device.type == "cuda"  # a checkpoint may come from the other kind of device
