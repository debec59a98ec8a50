"""Motion clips for the trainer: loading the formats users have (``formats.py``), matching a clip's joints to a
robot's by name, resampling to the control rate (``resample.py``), replaying it in MuJoCo for body poses and
velocities (``replay.py``), making keyframe clips (``keyframes.py``) and the batched forward kinematics the tasks
compare a robot with its reference by (``kinematics.py``). The clip format itself is ``contract/motion.py``."""
