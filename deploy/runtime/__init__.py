"""The robot-side runtime of an exported locomotion policy: numpy and onnxruntime only (no torch, no MuJoCo).

    robot.py        the ``Robot`` protocol an adapter implements (read the sensors, write joint commands, clock)
    observation.py  the policy's observation from the ONNX metadata alone (terms, scales, joints by name)
    supply.py       what a robot supplies (joint state, IMU, ...); a policy that observes more is refused
    safety.py       limits, target rate limit, watchdog (damped stance) and emergency stop
    timing.py       per-tick timing (observation, inference, write), p50 / p99, deadline misses, a CSV log
    controller.py   one tick: sensors -> observation -> policy (recurrent state) -> safety -> joint command
    loop.py         the fixed-rate loop at the policy's control rate around a ``Robot``
    udp.py          the wire format on loopback UDP and the runtime-side ``UdpRobot``

The simulated robot that answers on the other end is ``deploy/simrobot.py``; ``deploy/rehearse.py`` runs both.
"""
