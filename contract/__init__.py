"""The contract between the trainer and whoever runs its policies, declared once, torch-free (numpy only).

    errors.py         the one-line errors every layer raises (UserError, ConfigError, CheckpointError, ...)
    policy_format.py  the exported file's format tag and its version rule
    families.py       task families declare themselves (``FAMILY = Family(...)`` in their sim2sim module): found here
    schema.py         every metadata key of an exported policy: type, unit, frame, family; its upgrades
    terms.py          every observation term: size, unit, meaning, what supplies it on a robot, its scale, noise
                      and mirror rule for training, and its numpy value from a robot's reading for deployment
    breakdown.py      the command bins the evaluators report their metrics by
    motion.py         motion clips as data: the ``.npz`` clip format, its checks, numpy arithmetic on clips

Both the trainer (``rl_core``, ``envs``) and the deployment side (``deploy``) import it; it imports neither.
"""
