"""Batched physics backends behind one small interface (``base.Physics``): native MuJoCo C and MJX."""
