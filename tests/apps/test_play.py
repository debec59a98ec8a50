"""play.py on a Gymnasium task: JSON schema, export + plain-Gymnasium check, video, and one-line errors."""

from __future__ import annotations

import json

import pytest

import play
from tests.helpers import make_runner, tiny_cartpole


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("cartpole")
    cfg = tiny_cartpole(iterations=3)
    from rl_core.config_io import dump_yaml

    (run / "config.yaml").write_text(dump_yaml(cfg))
    make_runner(cfg, run_dir=run).learn()
    return run


def _play(capsys, *args: str) -> tuple[int, str, str]:
    code = play.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_schema(cartpole_run, tmp_path, capsys):
    code, out, err = _play(capsys, "--checkpoint", str(cartpole_run), "--episodes", "5",
                           "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    m = json.loads((tmp_path / "m.json").read_text())
    assert set(m) == {"task", "checkpoint", "iteration", "episodes", "diverged_episodes", "mean_episode_return",
                      "mean_episode_length", "fall_rate"}
    assert m["task"] == "CartPole-v1" and m["iteration"] == 3 and m["episodes"] == 5
    assert isinstance(m["mean_episode_return"], float) and m["mean_episode_length"] == m["mean_episode_return"]
    assert m["fall_rate"] == 1.0  # an untrained CartPole policy drops the pole: terminated, not truncated
    assert "mean_episode_return" in out


def test_onnx_in_a_plain_gymnasium_loop_reaches_the_same_return(cartpole_run, tmp_path, capsys):
    """Env i of play.py's evaluation is seeded like episode i of the plain loop, so every episode is the same."""
    onnx_file = tmp_path / "cartpole.onnx"
    code, out, err = _play(capsys, "--checkpoint", str(cartpole_run), "--episodes", "8", "--num-envs", "8",
                           "--export-onnx", str(onnx_file), "--sim2sim", str(onnx_file),
                           "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    m = json.loads((tmp_path / "m.json").read_text())
    sim = m["sim2sim"]
    assert sim["runtime"] == "onnxruntime in plain Gymnasium" and sim["episodes"] == 8
    assert sim["mean_episode_return"] == pytest.approx(m["mean_episode_return"], abs=1e-9)
    assert sim["mean_episode_length"] == m["mean_episode_length"]
    assert "sim2sim" in out and "max |diff|" in out


def test_gym_video_is_written_and_not_blank(cartpole_run, tmp_path, capsys):
    out_file = tmp_path / "cartpole.mp4"
    code, _, err = _play(capsys, "--checkpoint", str(cartpole_run), "--episodes", "1", "--video", str(out_file),
                         "--video-seconds", "0.5")
    assert code == 0, err
    import imageio.v2 as imageio

    frames = imageio.mimread(out_file)
    assert len(frames) >= 5 and frames[0].std() > 5.0


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "Pendulum-v1"], "error: checkpoint error: {run}/checkpoints/model_3.pt was trained on task "
                                "'CartPole-v1', not 'Pendulum-v1'"),
    (["--backend", "native"], "error: --backend applies to the MuJoCo tasks, not to the Gymnasium task "
                              "CartPole-v1"),
    (["--export-onnx", "policy.txt"], "error: --export-onnx=policy.txt is not allowed; expected a file name "
                                      "ending in .onnx"),
    (["--episodes", "-1"], "error: --episodes=-1 is not allowed; expected an integer >= 1 (0 only to export without "
                           "evaluating)"),
    (["--num-envs", "0"], "error: --num-envs=0 is not allowed; expected an integer >= 1"),
])
def test_bad_input_is_one_line(cartpole_run, capsys, args, message):
    code, _, err = _play(capsys, "--checkpoint", str(cartpole_run), *args)
    assert code == 2
    assert err.strip() == message.format(run=cartpole_run)


def test_sim2sim_alone_rejects_checkpoint_flags(capsys, tmp_path):
    code, _, err = _play(capsys, "--sim2sim", str(tmp_path / "p.onnx"), "--video", "x.mp4")
    assert code == 2 and err.strip() == "error: --video needs --checkpoint (--sim2sim alone runs only the ONNX file)"
    code, _, err = _play(capsys, "--sim2sim", str(tmp_path / "p.onnx"))
    assert code == 2 and err.strip() == f"error: policy file {tmp_path / 'p.onnx'} does not exist"
    code, _, err = _play(capsys)
    assert code == 2 and "--checkpoint is required" in err


def test_viewer_without_display_is_one_line(cartpole_run, capsys, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    code, _, err = _play(capsys, "--checkpoint", str(cartpole_run), "--viewer")
    assert code == 2 and err.strip().startswith("error: --viewer needs a display")


def test_export_only_with_zero_episodes(cartpole_run, tmp_path, capsys):
    code, out, err = _play(capsys, "--checkpoint", str(cartpole_run), "--episodes", "0",
                           "--export-jit", str(tmp_path / "p.pt"))
    assert code == 0, err
    assert (tmp_path / "p.pt").stat().st_size > 1000 and "TorchScript vs torch" in out
