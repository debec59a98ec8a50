"""A robot file sets its task's learner defaults (``flat_task(..., defaults=TaskDefaults(...))``); the command
line still wins."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import torch

import train
from configs.catalog import get_task
from configs.humanoid import HUMANOID_DEFAULTS, humanoid_flat
from configs.locomotion import flat_config, rough_config
from configs.task_defaults import TaskDefaults, apply_defaults

ROOT = Path(__file__).resolve().parents[3]

ROBOT_FILE = '''import dataclasses
from configs.locomotion import flat_task, rough_task
from configs.task_defaults import TaskDefaults
from examples.my_robot.my_robot import MY_ROBOT
DEFAULTS = TaskDefaults(init_noise_std=0.5, symmetry="augment", actor_hidden_dims=(64, 32), max_iterations=77)
flat = flat_task("defaults-flat", MY_ROBOT, defaults=DEFAULTS)
rough = rough_task("defaults-rough", MY_ROBOT, defaults=DEFAULTS)
'''


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "robot_with_defaults.py"
    path.write_text(ROBOT_FILE)
    return path


def test_the_robot_file_sets_its_defaults_on_flat_and_rough(tmp_path):
    path = _write(tmp_path)
    flat = get_task(f"{path}:flat").default_config()
    assert flat.policy.init_noise_std == 0.5 and flat.algorithm.symmetry == "augment"
    assert flat.policy.actor_hidden_dims == (64, 32) and flat.runner.max_iterations == 77
    assert flat.policy.critic_hidden_dims == flat_config().policy.critic_hidden_dims  # not set: the task's
    rough = get_task(f"{path}:rough").default_config()
    assert rough.policy.actor_hidden_dims == (64, 32) and rough.policy.init_noise_std == 0.5
    assert rough.policy.critic_hidden_dims == rough_config().policy.critic_hidden_dims
    assert rough.policy.normalize_obs is False  # rough's own default kept


def test_the_command_line_wins(tmp_path):
    path = _write(tmp_path)
    args = train.build_parser().parse_intermixed_args(
        ["--task", f"{path}:flat", "policy.init_noise_std=0.8", "algorithm.symmetry=none"])
    _, cfg, _, _ = train.resolve_config(args)
    assert cfg.policy.init_noise_std == 0.8 and cfg.algorithm.symmetry == "none"
    assert cfg.policy.actor_hidden_dims == (64, 32)  # the file's, not overridden


def test_no_defaults_change_nothing_and_the_humanoid_uses_them():
    cfg = flat_config()
    assert apply_defaults(cfg, None) == cfg and apply_defaults(cfg, TaskDefaults()) == cfg
    assert get_task("humanoid-flat").default_config() == humanoid_flat()
    h = humanoid_flat()
    assert (h.policy.init_noise_std, h.algorithm.symmetry, h.runner.max_iterations) == (0.5, "augment", 1000)
    assert HUMANOID_DEFAULTS.max_iterations == 1000
    assert get_task("quadruped-flat-blind").default_config().env.decimation == flat_config().env.decimation


def test_cpu_num_envs_only_on_a_cpu():
    defaults = TaskDefaults(cpu_num_envs=512)
    assert apply_defaults(flat_config(gpu=False), defaults).env.num_envs == 512
    assert apply_defaults(flat_config(gpu=True), defaults).env.num_envs == 4096


def test_quadruped_flat_runs_its_fast_settings_and_the_other_quadruped_tasks_do_not():
    spec = get_task("quadruped-flat")
    cpu, gpu = spec.machine_defaults(False), spec.machine_defaults(True)
    assert (cpu.env.num_envs, gpu.env.num_envs) == (512, 4096)
    assert cpu.env.decimation == gpu.env.decimation == 2  # physics steps of 0.01 s: FLAT_QUADRUPED's substeps
    assert cpu.env.reward_params.air_time_offset == 0.25
    env = spec.make_env(dataclasses.replace(cpu.env, num_envs=2), torch.device("cpu"))
    assert env.dt == pytest.approx(0.02) and env.model.opt.timestep == pytest.approx(0.01)
    blind = get_task("quadruped-flat-blind").machine_defaults(False)
    assert (blind.env.num_envs, blind.env.decimation, blind.env.reward_params.air_time_offset) == (1024, 4, 0.5)


def test_the_biped_walkthrough_of_the_docs_gives_the_built_in_humanoid(tmp_path):
    """docs/robots.md's biped file, every import spelled out, is humanoid-flat: same spec, same defaults."""
    import dataclasses
    import re
    import runpy

    from envs.robots.humanoid import HUMANOID

    doc = (ROOT / "docs" / "robots.md").read_text()
    section = doc[doc.index("## 6. Learner defaults, and a biped"):]
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", section, flags=re.S) if "MY_BIPED = RobotSpec(" in b]
    path = tmp_path / "my_biped.py"
    path.write_text(block)
    shutil.copy(HUMANOID.mjcf, tmp_path / "humanoid.xml")
    spec = runpy.run_path(str(path))["MY_BIPED"]
    assert spec == dataclasses.replace(HUMANOID, mjcf=tmp_path / "humanoid.xml")
    task = get_task(f"{path}:flat")
    assert task.default_config() == humanoid_flat()
    task.validate(task.default_config().env)


def test_a_quadruped_flat_checkpoint_of_four_substeps_keeps_its_0_005_s_step():
    """A checkpoint written when quadruped-flat ran 4 x 0.005 s stores env.decimation=4: the task's 0.02 s control
    step is divided among them again (``assemble.step_for``), not run as 4 x 0.01 s."""
    spec = get_task("quadruped-flat")
    old = dataclasses.replace(spec.machine_defaults(False).env, num_envs=2, decimation=4)
    env = spec.make_env(old, torch.device("cpu"))
    assert env.model.opt.timestep == pytest.approx(0.005) and env.dt == pytest.approx(0.02)
    assert env.export_metadata()["sim_dt"] == pytest.approx(0.005)
