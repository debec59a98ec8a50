"""train.py: bad input gives one clear line on stderr and exit status 2 before any work; help lists fields."""

import subprocess
import sys
from pathlib import Path

import pytest

import train

ROOT = Path(__file__).resolve().parents[2]


def run_main(capsys, *argv):
    code = train.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, needle", [
    (["--task", "CartPol-v1"], "did you mean CartPole-v1"),
    (["--task", "no-such-task-anywhere"], "unknown task"),
    (["--task", "CartPole-v1", "--num-envs", "0"], "env.num_envs=0"),
    (["--task", "CartPole-v1", "--num-envs", "-4"], "env.num_envs=-4"),
    (["--task", "CartPole-v1", "--max-iterations", "0"], "runner.max_iterations=0"),
    (["--task", "CartPole-v1", "runner.num_steps_per_env=-1"], "runner.num_steps_per_env=-1"),
    (["--task", "CartPole-v1", "algorithm.num_mini_batches=7"],
     "divisor of env.num_envs * runner.num_steps_per_env = 256"),
    (["--task", "CartPole-v1", "algorithm.learnig_rate=1e-3"], "algorithm.learnig_rate"),
    # overrides before and after a flag are all read (argparse alone calls the second group unrecognized)
    (["--task", "CartPole-v1", "algorithm.gamma=0.98", "--seed", "3", "algorithm.learnig_rate=1e-3"],
     "algorithm.learnig_rate"),
    (["--task", "CartPole-v1", "algorithm.schedule=cosine"], "'fixed', 'linear', 'adaptive'"),
    (["--task", "CartPole-v1", "--device", "cuda"], "no CUDA device"),
    (["--task", "CartPole-v1", "--device", "tpu"], "runner.device"),
    (["--task", "CartPole-v1", "nonsense"], "KEY=VALUE"),
    (["--resume", "/nonexistent/model_5.pt"], "does not exist"),
    (["--task", "CartPole-v1", "--seed", "abc"], "--seed"),
])
def test_bad_input_one_line_exit_2(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    try:
        code, out, err = run_main(capsys, *argv)
    except SystemExit as e:  # argparse errors
        code = e.code
        out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err and "training" not in out
    assert not (tmp_path / "runs").exists()


def test_corrupt_checkpoint_is_one_line(capsys, tmp_path):
    bad = tmp_path / "model_1.pt"
    bad.write_bytes(b"\x00garbage")
    code, out, err = run_main(capsys, "--resume", str(bad))
    assert code == 2 and "corrupt" in err and len(err.strip().splitlines()) == 1


def test_subprocess_exit_status_and_no_traceback(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "train.py"), "--task", "CartPole-v1", "algorithm.gamma=2"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr.strip() == "error: config error: algorithm.gamma=2.0 is not allowed; expected a number in (0, 1]"


def test_help_lists_fields_with_docs(capsys):
    code, out, _ = run_main(capsys, "--help", "--task", "Pendulum-v1")
    assert code == 0
    assert "algorithm.gamma=0.9" in out and "GAE lambda" in out and "env.env_id=Pendulum-v1" in out


def test_train_resume_end_to_end(capsys, tmp_path):
    run = tmp_path / "run"
    code, out, err = run_main(capsys, "--task", "CartPole-v1", "--max-iterations", "2", "--num-envs", "4",
                              "--run-dir", str(run), "--quiet", "runner.num_steps_per_env=16")
    assert code == 0, err
    assert (run / "config.yaml").exists() and (run / "checkpoints" / "model_2.pt").exists()
    code, out, err = run_main(capsys, "--resume", str(run), "--max-iterations", "3", "--quiet")
    assert code == 0, err
    assert "resumed from" in out and (run / "checkpoints" / "model_3.pt").exists()
    import json
    assert json.loads((run / "summary.json").read_text())["iterations"] == 3

    import play
    code = play.main(["--checkpoint", str(run), "--episodes", "3", "--json", str(tmp_path / "eval.json")])
    out, err = capsys.readouterr()
    assert code == 0, err
    metrics = json.loads((tmp_path / "eval.json").read_text())
    assert metrics["episodes"] == 3 and metrics["iteration"] == 3 and metrics["mean_episode_return"] > 0
    assert play.main(["--checkpoint", str(run), "--task", "Pendulum-v1"]) == 2
    assert "trained on task 'CartPole-v1'" in capsys.readouterr().err
