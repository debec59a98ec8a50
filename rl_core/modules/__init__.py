"""Neural-network building blocks: MLPs, running normalizers, action distributions, the actor-critic."""
