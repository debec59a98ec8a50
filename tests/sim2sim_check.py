"""The check shared by the export tests: sim2sim's plain-MuJoCo observation equals the training env's."""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from deploy.onnx_policy import OnnxPolicy
from deploy.sim2sim import PlainMujocoRobot


def assert_sim2sim_observation_matches(env, onnx_path, steps: int) -> None:
    """Step ``env`` (noise off) with random actions; after each step the robot rebuilt from the ONNX file's
    metadata alone, put in the env's state, must observe what the env observed. Fails if an episode ends early."""
    robot = PlainMujocoRobot(OnnxPolicy(onnx_path).metadata)
    env.reset(seed=4)
    g = torch.Generator().manual_seed(0)
    for t in range(steps):
        action = 0.5 * torch.randn(1, 12, generator=g)
        obs, _, term, trunc, _ = env.step(action)
        assert not bool(term | trunc), f"the episode ended at step {t}"
        r = env.physics.read()
        robot.data.qpos[:] = r.qpos[0].double().numpy()
        robot.data.qvel[:] = r.qvel[0].double().numpy()
        mujoco.mj_forward(robot.model, robot.data)
        robot.commands = env.commands[0].double().numpy()
        robot.last_action = action[0].double().numpy()
        frame = robot.observe()  # with an observation history: the env's newest frame
        assert len(frame) * env.obs_frames == obs["policy"].shape[1]
        np.testing.assert_allclose(frame, obs["policy"][0, -len(frame):].numpy(), atol=1e-4)
