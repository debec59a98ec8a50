"""Determinism, checkpoint round trip, exact resume, and refusal of unsafe or broken files."""

import os
import pickle

import pytest
import torch

from contract.errors import CheckpointError
from rl_core import checkpoint as ckpt
from tests.helpers import make_runner, tiny_cartpole


def params(runner):
    return [p.detach().clone() for p in runner.policy.state_dict().values()]


def assert_same(a, b):
    assert len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_same_seed_bit_identical_and_other_seed_differs():
    runs = []
    for seed in (0, 0, 1):
        r = make_runner(tiny_cartpole(seed=seed, iterations=3))
        r.learn()
        runs.append(params(r))
    assert_same(runs[0], runs[1])
    assert any(not torch.equal(x, y) for x, y in zip(runs[0], runs[2], strict=True))


def nested_equal(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(nested_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(nested_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_save_load_save_gives_same_content(tmp_path):
    cfg = tiny_cartpole(iterations=2)
    r = make_runner(cfg)
    r.learn()
    p1 = r.save(tmp_path / "a.pt")
    r2 = make_runner(cfg)
    r2.load_state_dict(ckpt.load(p1))
    p2 = r2.save(tmp_path / "b.pt")
    a, b = ckpt.load(p1), ckpt.load(p2)
    assert nested_equal(a, b)
    assert abs(float(r2.alg.lr) - float(r.alg.lr)) == 0.0
    assert r2.alg.optimizer.param_groups[0]["lr"] is r2.alg.lr


def test_resume_twice_is_bit_identical_and_continues(tmp_path):
    cfg = tiny_cartpole(iterations=6)
    r = make_runner(cfg)
    r.learn(num_iterations=3)
    path = r.save(tmp_path / "model_3.pt")
    results = []
    for _ in range(2):
        r2 = make_runner(cfg)
        r2.load_state_dict(ckpt.load(path))
        assert r2.iteration == 3 and r2.env_steps == 3 * 64
        r2.learn()
        assert r2.iteration == 6
        results.append(params(r2))
    assert_same(results[0], results[1])


def test_checkpoint_files_and_summary(tmp_path):
    cfg = tiny_cartpole(iterations=4)
    import dataclasses
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=2))
    r = make_runner(cfg, run_dir=tmp_path)
    r.learn()
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["model_2.pt", "model_4.pt"]
    assert ckpt.resolve_path(tmp_path).name == "model_4.pt"
    data = torch.load(tmp_path / "checkpoints" / "model_4.pt", weights_only=True)
    assert data["iteration"] == 4 and data["task"] == "CartPole-v1"
    import json
    summary = json.loads((tmp_path / "summary.json").read_text())
    for key in ("task", "iterations", "env_steps", "wall_time_s", "samples_per_s", "mean_episode_return",
                "mean_episode_length"):
        assert key in summary
    assert summary["iterations"] == 4 and summary["env_steps"] == 4 * 64
    assert any(p.name.startswith("events.out.tfevents") for p in tmp_path.iterdir())


class _Evil:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ['EVIL_MARKER']}",))


def test_malicious_pickle_is_refused_and_runs_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.setenv("EVIL_MARKER", str(marker))
    path = tmp_path / "evil.pt"
    torch.save({"format_version": 1, "payload": _Evil()}, path)
    with pytest.raises(CheckpointError, match="refused"):
        ckpt.load(path)
    assert not marker.exists()


def test_corrupt_truncated_foreign_and_missing_files(tmp_path):
    good = make_runner(tiny_cartpole(iterations=1))
    good.learn()
    path = good.save(tmp_path / "good.pt")
    blob = path.read_bytes()
    (tmp_path / "trunc.pt").write_bytes(blob[: len(blob) // 2])
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "foreign.pt")
    torch.save({"format_version": 999}, tmp_path / "future.pt")
    for name, pattern in [("trunc.pt", "corrupt"), ("junk.pt", "corrupt"), ("foreign.pt", "not a legged-mjx"),
                          ("future.pt", "newer"), ("missing.pt", "does not exist")]:
        with pytest.raises(CheckpointError, match=pattern) as e:
            ckpt.load(tmp_path / name)
        assert "\n" not in str(e.value)
    with pytest.raises(CheckpointError, match="no model_"):
        ckpt.resolve_path(tmp_path)


def test_checkpoint_of_another_task_is_rejected(tmp_path):
    r = make_runner(tiny_cartpole(iterations=1))
    data = r.state_dict()
    data["task"] = "Pendulum-v1"
    with pytest.raises(CheckpointError, match="Pendulum-v1"):
        make_runner(tiny_cartpole()).load_state_dict(data)


def test_atomic_save_leaves_no_temp_files(tmp_path):
    ckpt.save_atomic({"format_version": 1, "x": torch.ones(2)}, tmp_path / "m.pt")
    assert [p.name for p in tmp_path.iterdir()] == ["m.pt"]


def test_pickle_module_is_not_used_for_plain_data(tmp_path):
    # The whole checkpoint loads with the safe unpickler: no custom classes inside.
    r = make_runner(tiny_cartpole(iterations=1))
    data = r.state_dict()
    torch.save(data, tmp_path / "x.pt")
    torch.load(tmp_path / "x.pt", weights_only=True)
    with pytest.raises(pickle.UnpicklingError):
        torch.save({"bad": _Evil}, tmp_path / "y.pt")
        torch.load(tmp_path / "y.pt", weights_only=True)
