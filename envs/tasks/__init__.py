"""Task logic in torch over the physics readout: commands, observations, rewards, terminations, resets, randomization."""
