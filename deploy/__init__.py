"""Running an exported policy outside the trainer, the way a robot does: onnxruntime and numpy, no torch.

    onnx_policy.py  an ONNX file and its metadata (observation layout, scales, gains, ...)
    sim2sim.py      a locomotion policy in one plain MuJoCo simulation at the control rate
    terrain.py      its ground in numpy: heights from the scene's heightfield, the height scan, the tiles
    gym_loop.py     a Gymnasium policy in a plain Gymnasium loop
    run.py          picks the right one from the file's metadata (play.py --sim2sim)
    schema.py       the metadata contract: every key, type, unit and frame; the format version rule
    runtime/        the robot-side runtime: Robot protocol, observation, safety layer, fixed-rate loop, timing
    simrobot.py     a simulated robot in its own process, real time, behind UDP on loopback
    rehearse.py     python -m deploy.rehearse policy.onnx: the runtime against the simulated robot, swept
"""
