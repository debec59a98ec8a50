"""Batched MuJoCo tasks: the base every task family shares, and the families.

    base.py             MujocoTask: physics backend, random stream, task state, CUDA graph, checkpoints
    parts.py            TaskParts: what a family assembles for the step recipe, typed by its view and quantities
    mujoco_config.py    MujocoEnvConfig: the batch and the backend (every family's config extends it)
    state.py            per-env task state declared once (TaskState, per_env)
    obs_table.py        ObsTerm: a family's observation terms as one table, each row whole (plain data)
    observations.py     ObservationLayout: layout, values, noise, bounds, export, mirror; the shared observe ending
    history.py          an observation history: the policy's last frames, oldest first
    reward_terms.py     a family's reward terms by name (RewardTerms) and their weights from a config dataclass
    graphed_step.py     the task logic of a step captured and replayed as a CUDA graph
    bounds.py           speed bounds of a robot beyond which a world has diverged
    rotations.py        quaternions (w, x, y, z) in batches
    robot_metadata.py   the exported metadata keys every legged family writes alike (robot, scene, joints, gains)
    scene_bytes.py      a compiled scene as text for an exported policy's metadata (``scene_mjb``)
    locomotion/         velocity tracking for legged robots (+ locomotion/config.py, its typed config)
    reach/              a fixed-base arm moving its fingertip to random targets
    track/              motion tracking: a robot reproducing motion clips, every joint trained
    */                  any other task family: its folder, its own ``__init__.py`` says what it is
"""
