"""Batched physics backends behind one small interface (``base.Physics``), one row each in ``registry.py``:
native MuJoCo C (the CPU default), MuJoCo Warp (the GPU default when installed) and MJX."""
