"""Running an exported policy outside the trainer, the way a robot does: onnxruntime and numpy, no torch.

What an exported file holds is the torch-free ``contract`` package (the metadata schema, the observation terms);
``deploy`` imports it and nothing else of this project.

    onnx_policy.py  an ONNX file and its metadata (observation layout, scales, gains, ...)
    plain_mujoco.py  what the plain-MuJoCo sim2sim families share: the stored scene, servos, act, the reading
    sim2sim.py      a locomotion policy in one plain MuJoCo simulation at the control rate
    terrain.py      its ground in numpy: heights from the scene's heightfield, the height scan, the tiles
    sim2sim_reach.py  a reaching policy in one plain MuJoCo simulation
    sim2sim_track.py  a motion-tracking policy in one plain MuJoCo simulation, from the ONNX file alone
    sim2sim_*.py    another task family's check (its ``FAMILY = Family(...)`` declares it: contract/families.py)
    runtime/        the robot-side runtime: Robot protocol, observation, safety layer, fixed-rate loop, timing
    simrobot.py     a simulated robot in its own process, real time, behind UDP on loopback
    maker_model.py  another model of the robot for it (rehearse --model FILE.xml: the maker's file)
    rehearse.py     python -m deploy.rehearse policy.onnx: the runtime against the simulated robot, swept
    unitree/        Unitree's low-level interface over DDS: the runtime's Robot on a real Go2 / Go1 / G1
"""
