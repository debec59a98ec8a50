"""Batched environments: the MuJoCo tasks and their physics backends, and the Gymnasium adapter.

    physics/    backends behind one interface: native.py (MuJoCo C, mujoco.batch), mjx.py (MJX / JAX), factory.py
    bridge.py   zero-copy JAX <-> torch (DLPack), for the MJX backend
    robots/     RobotSpec (spec.py: a robot as names / regexes), its resolution (resolved.py, names.py) and the
                built-in quadruped (quadruped.py + quadruped.xml)
    scenes/     the world a robot is put into with MjSpec (flat.py) and the assembly that adds the task's
                sensors, servos and camera by name (assemble.py)
    tasks/      task logic in torch: locomotion.py (+ its config, reward terms, rotations)
    adapters/   rsl_rl.py: our envs under rsl_rl's OnPolicyRunner
    gym.py      any Gymnasium id as a batched env;  registry.py: task name -> env factory + default config
    atari.py    ALE games as uint8 frame stacks (lost lives end the learner's episode, the game score is logged);
                atari_wrappers.py: the per-game Gymnasium preprocessing, also used by deploy/ (no torch)
    video.py    offscreen MP4 frames, captions and gait plots;  recorders.py: play.py's video / viewer callbacks
"""
