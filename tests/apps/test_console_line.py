"""The per-iteration console line shows the task's headline metrics next to the return: the metrics each env
names (``rl_core.env_api.Headlined``), which ``rl_core`` itself never names."""

from pathlib import Path

from envs.tasks.locomotion.env import LocomotionEnv
from envs.tasks.track.env import TrackEnv
from rl_core.logging import Logger, headline

ROOT = Path(__file__).resolve().parents[2]

BASE = {"Perf/samples_per_s": 1000.0, "Perf/collection_time_s": 0.5, "Perf/learning_time_s": 0.2,
        "Loss/value": 0.1, "Loss/surrogate": -0.01, "Policy/entropy": 1.0, "Policy/kl": 0.01,
        "Loss/learning_rate": 1e-3, "Episode/mean_return": 12.5, "Episode/mean_length": 100.0}


def test_locomotion_headline_next_to_the_return(tmp_path, capsys):
    logger = Logger(tmp_path, 10, headline_metrics=LocomotionEnv.headline_metrics)
    # 30 steps in 1000 terminated, 10 in 1000 truncated: 3 of 4 episode ends were falls
    logger.log(3, 4096, {**BASE, "Env/lin_vel_error": 0.1234, "Env/yaw_rate_error": 0.25,
                         "Env/terminated": 0.03, "Env/truncated": 0.01}, 60.0)
    logger.close()
    line = capsys.readouterr().out.strip()
    assert "ret     12.50 len   100.0 lin_err 0.123 yaw_err 0.250 fall 75% |" in line


def test_no_headline_for_envs_without_those_metrics():
    assert headline(BASE) == ""
    assert headline({"Env/terminated": 0.0, "Env/truncated": 0.0}) == " fall   n/a"


def test_tracking_headline_and_amp_rewards(tmp_path, capsys):
    logger = Logger(tmp_path, 10, headline_metrics=TrackEnv.headline_metrics)
    logger.log(3, 4096, {**BASE, "Env/joint_pos_error": 0.0812, "Env/anchor_pos_error": 0.05, "Env/terminated": 0.0,
                         "Env/truncated": 0.02, "AMP/task_reward": 0.0123, "AMP/style_reward": 0.61,
                         "AMP/expert_d": 0.4, "AMP/policy_d": -0.3}, 60.0)
    logger.close()
    line = capsys.readouterr().out.strip()
    assert "len   100.0 q_err 0.081 anchor_err 0.050 fall 0% |" in line
    assert "kl 0.0100 | task 0.0123 style 0.610 d +0.40/-0.30 lr" in line


def test_the_learner_names_no_familys_metric():
    names = {key for env in (LocomotionEnv, TrackEnv) for key, _ in env.headline_metrics}
    for path in (ROOT / "rl_core").rglob("*.py"):
        text = path.read_text()
        assert not [n for n in names if n in text], path
    # a metric no env names stays off the line
    assert headline({**BASE, "Env/lin_vel_error": 0.1}) == ""
