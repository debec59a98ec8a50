"""train.py --help --task X and config.yaml say which defaults depend on the machine (GPU present or not)."""

import train
from configs.catalog import get_task
from configs.machine import machine_dependent


def test_locomotion_names_every_machine_dependent_default():
    deps = machine_dependent(get_task("quadruped-flat"))
    assert deps["env.num_envs"] == (4096, 512)  # quadruped-flat's TaskDefaults.cpu_num_envs
    assert deps["runner.device"] == ("cuda", "cpu")
    assert deps["runner.max_iterations"] == (1500, 300)
    assert machine_dependent(get_task("CartPole-v1")) == {}


def test_help_and_config_yaml_say_it(tmp_path, capsys):
    # in this process (train.main): a child would spend 5 s importing torch and the tasks for each command
    assert train.main(["--help", "--task", "quadruped-flat"]) == 0
    out = capsys.readouterr().out
    assert "defaults that depend on the machine" in out and "env.num_envs = " in out and "env.backend = auto" in out
    code = train.main(["--task", "quadruped-flat", "--num-envs", "4", "--max-iterations", "1", "--run-dir",
                       str(tmp_path / "q"), "--quiet", "runner.num_steps_per_env=4"])
    assert code == 0, capsys.readouterr().err
    text = (tmp_path / "q" / "config.yaml").read_text()
    assert "# defaults that depend on the machine" in text and "# runner.device = " in text
