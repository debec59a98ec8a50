"""Adapters that let other trainers drive our batched envs."""
