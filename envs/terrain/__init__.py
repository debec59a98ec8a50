"""Generated terrain: config, height-map generator, MuJoCo heightfield scene, height scan and curriculum."""
