"""Environments: the Gymnasium adapter, batched MuJoCo tasks, and the task registry."""
