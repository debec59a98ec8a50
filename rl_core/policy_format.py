"""The format tag of exported policies (torch-free: ``deploy/`` reads it without importing torch)."""

FORMAT = "legged-mjx-policy/1"
"""Value of the ``format`` metadata entry that ``rl_core.export`` writes and ``deploy.onnx_policy`` checks."""
