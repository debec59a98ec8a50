"""bench/op_count.py: ops attributed to the phase whose code ran them, every registered MuJoCo task in the stored
baseline, and a count of a real rollout."""

from __future__ import annotations

import json

import torch

from bench.op_count import BASELINE, count_task, mujoco_tasks
from bench.op_counter import OpCounter, classify


def test_ops_go_to_the_phase_of_the_code_that_ran_them() -> None:
    step = [("envs/tasks/locomotion/env.py", "_finish_step"), ("envs/tasks/base.py", "step"),
            ("rl_core/runner.py", "collect")]
    assert classify([("envs/tasks/locomotion/rewards.py", "tracking_lin_vel"), *step]) == "rewards"
    # a quantity first computed inside a reward term is kinematics; an observation inside a reset is the reset's
    assert classify([("envs/tasks/locomotion/step.py", "lin_vel_b"), ("envs/tasks/locomotion/rewards.py", "x"),
                     *step]) == "kinematics"
    assert classify([("envs/tasks/locomotion/env.py", "_observed"), ("envs/tasks/locomotion/env.py", "_restarted"),
                     *step]) == "resets"
    assert classify(step) == "step body"
    assert classify([("envs/physics/warp.py", "step"), ("envs/tasks/locomotion/env.py", "_act"),
                     ("envs/tasks/base.py", "step"), ("rl_core/runner.py", "collect")]) == "act"
    assert classify([("rl_core/modules/mlp.py", "forward"), ("rl_core/runner.py", "collect")]) == "policy"
    assert classify([("rl_core/runner.py", "collect")]) == "runner"


def test_the_counter_counts_kernels_not_views_and_sees_syncs() -> None:
    x = torch.ones(4, 3)
    with OpCounter() as c:
        y = (x[:, :2] * 2).sum(1)  # a view (free), a multiply and a sum
        bool(y.any())  # a reduction and a host sync
    assert sum(c.counts.values()) == 4 and sum(c.syncs.values()) == 1


def test_every_registered_mujoco_task_has_a_baseline_row() -> None:
    stored = json.loads(BASELINE.read_text())["tasks"]
    missing = [t for t in mujoco_tasks() if t not in stored]
    assert not missing, f"no baseline row for {missing}: python -m bench.op_count --write-baseline"


def test_a_rollout_of_the_quadruped_is_counted_by_phase() -> None:
    import argparse

    args = argparse.Namespace(num_envs=4, steps=2, backend="native")
    out = count_task("quadruped-flat", args)
    assert {"observation", "rewards", "terminations", "resets", "policy", "runner"} <= set(out["phases"])
    assert out["graph"] > 100 and out["eager"] > 50 and not out["syncs"]
    assert out["learn"]["ops_per_minibatch"] > 50 and out["learn"]["graphable"]
