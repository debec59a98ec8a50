"""The format tag of exported policies (torch-free: ``deploy/`` reads it without importing torch)."""

FORMAT = "legged-mjx-policy/2.4"
"""Value of the ``format`` metadata entry that ``rl_core.export`` writes; ``legged-mjx-policy/MAJOR[.MINOR]``, the
schema of each major in ``contract/schema.py`` and docs/deploy.md. A change that breaks a reader of the previous
format bumps the major; new optional keys that an older reader may ignore bump the minor (2.1: the held joints'
servo gains; 2.2: the ``recurrent`` state may be an observation history, memory ``history``; 2.3: the ``track``
family's ``motion_clips`` and ``motion``; 2.4: every file names its ``task_family``, and ``scene_mjb`` leaves out
what only drawing uses)."""
