"""train.py --help --task X and config.yaml say which defaults depend on the machine (GPU present or not)."""

import subprocess
import sys
from pathlib import Path

from configs.catalog import get_task
from configs.machine import machine_dependent

ROOT = Path(__file__).resolve().parents[2]


def test_locomotion_names_every_machine_dependent_default():
    deps = machine_dependent(get_task("quadruped-flat"))
    assert deps["env.num_envs"] == (4096, 1024)
    assert deps["runner.device"] == ("cuda", "cpu")
    assert deps["runner.max_iterations"] == (1500, 300)
    assert machine_dependent(get_task("CartPole-v1")) == {}


def test_help_and_config_yaml_say_it(tmp_path):
    out = subprocess.run([sys.executable, "train.py", "--help", "--task", "quadruped-flat"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120).stdout
    assert "defaults that depend on the machine" in out and "env.num_envs = " in out and "env.backend = auto" in out
    r = subprocess.run([sys.executable, "train.py", "--task", "quadruped-flat", "--num-envs", "4",
                        "--max-iterations", "1", "--run-dir", str(tmp_path / "q"), "--quiet",
                        "runner.num_steps_per_env=4"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "q" / "config.yaml").read_text()
    assert "# defaults that depend on the machine" in text and "# runner.device = " in text
