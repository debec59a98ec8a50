"""play.py --web: the page in a real headless browser (Debian's chromium driven by Playwright) on a short-trained
quadruped-flat run, and the one-line errors (busy or invalid port, missing extra, bad checkpoint, Gymnasium task).

The browser test needs /usr/bin/chromium (``apt-get install -y chromium``) and skips without it. A policy trained
for two iterations does not walk, so the default test checks that the measured velocity is the followed robot's
live one; ``LEGGED_MJX_WEB_CHECKPOINT=<trained quadruped-flat run>`` adds the slow check that it follows the slider.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import time
from pathlib import Path

import pytest

import play
from apps.web import probe
from tests.helpers import make_runner, tiny_cartpole

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 120.0
"""Limit of each wait on the page: a software renderer on a loaded 2-core machine draws about a frame a second."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def quadruped_run(tmp_path_factory):
    """A quadruped-flat run folder with model_1.pt and model_2.pt (8 envs, 2 short iterations)."""
    from configs.catalog import get_task
    from configs.quadruped import FLAT_QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from rl_core.config_io import dump_yaml
    from rl_core.runner import OnPolicyRunner

    run = tmp_path_factory.mktemp("quadruped")
    cfg = get_task("quadruped-flat").default_config()
    cfg = dataclasses.replace(
        cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native"),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=8, max_iterations=2, save_interval=1, device="cpu"),
        algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    (run / "config.yaml").write_text(dump_yaml(cfg))
    OnPolicyRunner(LocomotionEnv(cfg.env, FLAT_QUADRUPED), cfg, task="quadruped-flat", run_dir=run, quiet=True).learn()
    assert [p.name for p in sorted((run / "checkpoints").glob("model_*.pt"))] == ["model_1.pt", "model_2.pt"]
    return run


def _drive(run: Path, trained: bool) -> None:
    """Open the page, see the robot, move the forward slider, switch checkpoints, stop with Ctrl-C."""
    port = _free_port()
    with probe.page(timeout_ms=WAIT_S * 1000) as pg, \
            probe.serving(["--checkpoint", str(run), "--num-envs", "4", "--port", str(port)], ROOT) as server:
        url, _ = server.wait_url(WAIT_S)
        assert url == f"http://127.0.0.1:{port}"
        pg.goto(url)
        # the check: wait_for raises AssertionError when the robot never shows (it returns only a true value)
        probe.wait_for(lambda: probe.followed_pixels(probe.scene_shot(pg)) > 200, WAIT_S, "the robot")
        probe.dismiss_notifications(pg)
        # the same view without the robots: no robot pixels, and the picture differs
        with_robots = probe.scene_shot(pg)
        probe.toggle(pg, "Show robots")
        probe.wait_for(lambda: probe.followed_pixels(probe.scene_shot(pg)) == 0, WAIT_S, "the robots hidden")
        assert probe.scene_shot(pg) != with_robots
        probe.toggle(pg, "Show robots")

        for target in (0.0, 0.8) if not trained else (0.0, 0.8, 0.0):
            probe.set_slider(pg, "Forward (m/s)", target)
            probe.wait_for(lambda t=target: probe.number(pg, "Commanded vx") == t, WAIT_S, f"commanded vx {target}")
            if trained:  # a trained policy follows: the 1-s mean of the measured speed gets near the command
                probe.wait_for(lambda t=target: abs((probe.number(pg, "Measured vx") or 9.0) - t) < 0.25, WAIT_S,
                               f"measured vx near {target}")
        # the measured velocity is live: it changes from one panel update to the next
        seen = {probe.number(pg, "Measured vx")}
        probe.wait_for(lambda: seen.add(probe.number(pg, "Measured vx")) or len(seen) > 1, WAIT_S,
                       "the measured vx to change")
        assert probe.number(pg, "Updates/s") > 0

        if not trained:
            probe.choose(pg, "Checkpoint", "model_1.pt")
            probe.wait_for(lambda: probe.text(pg, "Loaded").startswith("model_1.pt (iteration 1)"), WAIT_S,
                           "model_1.pt loaded")
            assert any("loaded model_1.pt" in line for line in server.lines)
            # "Follow newest" loads the newest, then a checkpoint that appears while the page is open (a training)
            probe.toggle(pg, "Follow newest")
            probe.wait_for(lambda: probe.text(pg, "Loaded").startswith("model_2.pt"), WAIT_S, "model_2.pt loaded")
            newer = run / "checkpoints" / "model_3.pt"
            shutil.copyfile(run / "checkpoints" / "model_2.pt", newer)
            try:
                probe.wait_for(lambda: probe.text(pg, "Loaded").startswith("model_3.pt"), WAIT_S, "model_3.pt loaded")
            finally:
                newer.unlink()
        pg.close()  # a closed tab: the server idles
        time.sleep(1.0)
        cpu = server.cpu_seconds()
        time.sleep(2.0)
        assert server.cpu_seconds() - cpu < 0.5, "the server kept simulating with no page open"
        assert server.interrupt() == 0, server.output()
        assert "web viewer: stopped" in server.output()
    play.validate_web(play.parse_args(["--checkpoint", str(run), "--web", "--port", str(port)]))  # the port is free


@pytest.mark.slow
@pytest.mark.skipif(probe.browser_missing() is not None, reason=f"no browser: {probe.browser_missing()}")
def test_web_viewer_in_a_headless_browser(quadruped_run):
    _drive(quadruped_run, trained=False)


@pytest.mark.slow
@pytest.mark.skipif(probe.browser_missing() is not None, reason=f"no browser: {probe.browser_missing()}")
@pytest.mark.skipif(not os.environ.get("LEGGED_MJX_WEB_CHECKPOINT"),
                    reason="LEGGED_MJX_WEB_CHECKPOINT (a trained quadruped-flat run folder) is not set")
def test_trained_policy_follows_the_forward_slider():
    _drive(Path(os.environ["LEGGED_MJX_WEB_CHECKPOINT"]), trained=True)


# ------------------------------------------------------------------------------------ one-line errors
def _play(capsys, *args: str) -> tuple[int, str]:
    code = play.main(list(args))
    return code, capsys.readouterr().err


def test_busy_port_is_one_line(quadruped_run, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, err = _play(capsys, "--checkpoint", str(quadruped_run), "--web", "--port", str(port))
    assert code == 2
    assert err.strip() == (f"error: --port={port} on 127.0.0.1 is not available (Address already in use); "
                           "choose another with --port")


@pytest.mark.parametrize("port", ["0", "70000"])
def test_invalid_port_is_one_line(quadruped_run, capsys, port):
    code, err = _play(capsys, "--checkpoint", str(quadruped_run), "--web", "--port", port)
    assert code == 2 and err.strip() == f"error: --port={port} is not allowed; expected an integer in [1, 65535]"


def test_missing_extra_is_one_line(quadruped_run, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "viser", None)  # find_spec then finds nothing, as without the package
    code, err = _play(capsys, "--checkpoint", str(quadruped_run), "--web")
    assert code == 2 and err.strip() == 'error: --web needs the viser package: pip install -e ".[web]"'


def test_bad_checkpoint_is_one_line(tmp_path, capsys):
    bad = tmp_path / "model_3.pt"
    bad.write_bytes(b"not a checkpoint")
    code, err = _play(capsys, "--checkpoint", str(bad), "--web", "--port", str(_free_port()))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: checkpoint error: {bad} ")


def test_gymnasium_task_is_one_line(tmp_path, capsys):
    from rl_core.config_io import dump_yaml

    cfg = tiny_cartpole(iterations=1)
    (tmp_path / "config.yaml").write_text(dump_yaml(cfg))
    make_runner(cfg, run_dir=tmp_path).learn()
    code, err = _play(capsys, "--checkpoint", str(tmp_path), "--web", "--port", str(_free_port()))
    assert code == 2
    assert err.strip() == ("error: --web is for the MuJoCo locomotion tasks; "
                           "use --video for the Gymnasium task CartPole-v1")


def test_web_runs_alone(quadruped_run, capsys):
    code, err = _play(capsys, "--checkpoint", str(quadruped_run), "--web", "--video", "x.mp4")
    assert code == 2
    assert err.strip() == "error: --web runs alone, not with --video (the page has its own terrain picker)"


# ------------------------------------------------------------------------------------ the command hook
def test_held_commands_last_through_resampling_and_resets():
    import torch

    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion.config import CommandConfig, LocomotionEnvConfig

    cfg = LocomotionEnvConfig(num_envs=4, backend="native", episode_length_s=0.3,
                              commands=CommandConfig(resample_s=0.1))
    held_env, free_env = LocomotionEnv(cfg, QUADRUPED), LocomotionEnv(cfg, QUADRUPED)
    held_env.reset(seed=1)
    free_env.reset(seed=1)
    held = torch.tensor([[0.7, -0.2, 0.3]]).expand(4, 3)
    held_env.hold_commands(held)
    g = torch.Generator().manual_seed(0)
    resets = 0
    for _ in range(40):  # 5 resamplings and 2 time-outs per env
        actions = torch.randn(4, held_env.action_spec.n, generator=g) * 0.3
        obs, _, term, trunc, _ = held_env.step(actions)
        free_env.step(actions)
        resets += int((term | trunc).sum())
        assert torch.equal(held_env.commands, held)
        scale = torch.tensor(held_env.obs.export_scales()["commands"])
        assert torch.allclose(obs["policy"][:, 9:12], held * scale)  # what the policy sees
    assert resets >= 4
    # the hold draws the same random numbers: both envs' streams are where they would be without it
    assert torch.equal(held_env.generator.get_state(), free_env.generator.get_state())
    held_env.hold_commands(None)
    for _ in range(5):
        held_env.step(torch.zeros(4, held_env.action_spec.n))
    assert not torch.equal(held_env.commands, held)  # random commands again
