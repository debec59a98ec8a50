"""Batched environments: the MuJoCo tasks and their physics backends, and the Gymnasium / ALE adapters. What a user
runs around them (the web viewer, video, sim2sim dispatch, the rsl_rl adapter) lives one floor up, in ``apps/``.

    physics/            backends behind one interface (base.py), one row each in registry.py (factory.py builds
                        them): native.py (MuJoCo C, mujoco.batch), warp.py (MuJoCo Warp from torch; its kernel
                        cache: warp_kernels.py), mjx.py (MJX / JAX); cpu_threads.py: torch's threads beside a CPU
                        backend
    bridge.py           zero-copy JAX <-> torch (DLPack), for the MJX backend
    robots/             data: RobotSpec (spec.py: a robot as names / regexes), its checks (checks.py), name
                        matching (names.py), left / right twins and the mirror (sides.py, mirror.py), the resolved
                        indices (resolved.py), the built-in robots (quadruped.py, humanoid.py + their MJCF files),
                        a spec drafted from a robot file (draft*.py) and Menagerie robots by name (menagerie.py)
    scenes/             assemble.py puts a robot into a scene with MjSpec, as options.py's SceneOptions say:
                        joints.py (trained / held / welded), feet.py, contacts.py (watched collision geoms,
                        collision filter), actuators.py (position servos), flat.py / terrain.py (the floor: a plane
                        or a heightfield), sensing.py (task sensors, camera), physics_only.py (an export's scene
                        without what only drawing uses)
    terrain/            generated terrain: config.py, generator.py (the height map), ground.py (start positions,
                        curriculum, height scan in torch), spawn.py (start heights)
    tasks/              task logic in torch: the base every family shares (base.py) and the families: locomotion/
                        (velocity tracking), reach/ (a fixed-base arm), track/ (motion tracking)
    motion/             motion clips for the trainer: their formats, resampling, replay in MuJoCo, keyframe clips,
                        batched forward kinematics, gait statistics
    robot_check/        the robot check's simulations and verdict (``python -m tools.check_robot``)
    gym.py              any Gymnasium id as a batched env
    registry.py         task name -> env factory + default config; a user's task file (``path.py:attr``)
    atari.py            ALE games as uint8 frame stacks (lost lives end the learner's episode, the game score is
                        logged)
    atari_wrappers.py   the per-game Gymnasium preprocessing, also used by deploy/ (no torch)
    file_errors.py      errors from a user's task file, with its line and the spec field

``tests/house/test_package_maps.py`` checks this map and the other package maps: every module of the package named,
every
name an entry starts with present.
"""
