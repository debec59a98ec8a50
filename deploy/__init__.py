"""Running an exported policy outside the trainer, the way a robot does: onnxruntime and numpy, no torch.

    onnx_policy.py  an ONNX file and its metadata (observation layout, scales, gains, ...)
    sim2sim.py      a locomotion policy in one plain MuJoCo simulation at the control rate
    terrain.py      its ground in numpy: heights from the scene's heightfield, the height scan, the tiles
    gym_loop.py     a Gymnasium policy in a plain Gymnasium loop
    run.py          picks the right one from the file's metadata (play.py --sim2sim)
"""
