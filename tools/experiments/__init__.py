"""Experiments: the scripts behind the docs' measurements and the project's own checks (rollout and learner hashes,
seed sweeps, curves, profiles, fault campaigns, reproductions), run as ``python -m tools.experiments.NAME``. The
commands a user runs live one floor up, in ``tools/``."""
