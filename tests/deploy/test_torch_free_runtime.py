"""The robot-side runtime needs numpy and onnxruntime only: deploy/ and the contract import neither torch nor
MuJoCo nor the trainer's packages, and a controller built from a shipped policy file runs its ticks.

The fast test runs the runtime in a child process whose imports of torch, mujoco and the trainer's packages fail;
the slow one in a fresh virtual environment holding numpy and onnxruntime alone (pip from the package index).
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "docs" / "humanoid_policy.onnx"
"""A shipped policy of the current major format (a format-1 file's joint ranges come from its scene: MuJoCo)."""

RUN = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
from deploy.onnx_policy import OnnxPolicy
from deploy.runtime.controller import Controller
from deploy.runtime.robot import RobotState
import deploy.runtime.loop, deploy.runtime.safety, deploy.runtime.supply, deploy.runtime.timing, deploy.runtime.udp
import contract.schema, contract.terms, contract.breakdown

policy = OnnxPolicy({str(POLICY)!r})
meta = policy.metadata
joints = list(reversed(meta["joint_names"] + meta.get("held_joint_names", [])))  # the robot's own order
controller = Controller(policy, joints)
n = len(joints)
state = RobotState(stamp=0.0, joint_pos=np.zeros(n), joint_vel=np.zeros(n), imu_quat=np.array([1.0, 0, 0, 0]),
                   gyro=np.zeros(3), base_lin_vel=np.zeros(3))
commands = [controller.tick(state, 0.02 * i, np.array([0.5, 0.0, 0.0])) for i in range(3)]
assert all(c is not None and np.isfinite(c.target).all() for c in commands)
banned = sorted(m for m in sys.modules if m.split(".")[0] in {{"torch", "mujoco", "rl_core", "envs", "configs",
                                                               "apps"}})
assert not banned, banned
print("ok", len(commands))
"""

BLOCK = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"torch", "mujoco", "rl_core", "envs", "configs", "apps"}:
            raise ImportError(f"{name} is not available here")
        return None
sys.meta_path.insert(0, Blocked())
"""


def test_the_runtime_runs_with_torch_mujoco_and_the_trainer_unimportable():
    out = subprocess.run([sys.executable, "-c", BLOCK + RUN], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok 3"


def test_the_blocker_can_fail():
    out = subprocess.run([sys.executable, "-c", BLOCK + "import torch"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "not available here" in out.stderr


@pytest.mark.slow
def test_the_runtime_runs_in_a_venv_with_numpy_and_onnxruntime_alone(tmp_path):
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "numpy", "onnxruntime"], capture_output=True,
                         text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            timeout=120).stdout.lower()
    assert "torch" not in listed and "mujoco" not in listed
    out = subprocess.run([str(python), "-c", RUN], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok 3"
