"""Small configs and runners shared by tests (they live with the fault harness, which uses them too)."""

from fault_injection.cartpole import make_runner, tiny_cartpole

__all__ = ["make_runner", "tiny_cartpole"]
