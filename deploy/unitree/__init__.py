"""Unitree's low-level interface over DDS (CycloneDDS; ``pip install -e ".[unitree]"``) for the robot-side runtime.

    messages.py   LowCmd_ / LowState_ of the unitree_go (Go2, Go1) and unitree_hg (G1) families as data
    crc.py        the checksum a robot checks on every command, in plain Python (and numpy, for a fixed length)
    packed.py     a message kept as its bytes (C and CDR layouts), for the simulated robot's 500 Hz low state
    idl.py        the DDS types with Unitree's type names (the only module that imports cyclonedds at load)
    profiles.py   robot profiles: family, motor slot <-> Menagerie joint name
    remote.py     the wireless remote in the low state; sticks -> velocity command
    dds.py        CycloneDDS on one interface (CYCLONEDDS_URI; loopback for tests and rehearsals)
    robot.py      UnitreeRobot: the runtime's Robot over rt/lowstate and rt/lowcmd
    simrobot.py   deploy/simrobot.py's simulated robot speaking the same DDS (its own process)
    rehearsal.py  deploy.rehearse --transport unitree-dds
    operator.py   the operator's sequence: low state, damping, default pose, policy, e-stop
    freshness.py  which low states the sequence may act on (checksum, a repeated tick, the G1's mode_machine)
    continuity.py  targets that cannot jump: every change of a driven joint's target bounded, whatever the phase
    faults.py     python -m deploy.unitree.faults: the sequence against the simulated robot with a fault injected
    __main__.py   python -m deploy.unitree POLICY --interface eth0: the real-robot command
    install_cyclonedds_0_10.sh   CycloneDDS 0.10.2, the version the robots run, built from source (Debian)
"""
