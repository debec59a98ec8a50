"""Teacher-student distillation (algorithm.name=distillation): config and teacher checks are one-line errors, the
student learns a teacher it can represent (MLP and recurrent students) and not one that reads what the student
cannot see, the teacher never changes and lives in the student's checkpoints, resume is exact, the rollout and the
memoryless update make no host sync, and a distilled checkpoint plays and exports like any policy."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from contract.errors import CheckpointError, ConfigError
from rl_core import checkpoint as ckpt
from rl_core.config import AlgorithmConfig, EnvConfig, PolicyConfig, RunnerConfig, TrainConfig
from rl_core.config_io import to_dict
from rl_core.distillation import distillation_loss
from rl_core.env_api import ActionSpec, VecEnv
from rl_core.modules.actor_critic import ActorCritic
from rl_core.runner import OnPolicyRunner

W_SEEN = [[-0.8, 0.2, 0.5, 0.0], [0.1, -0.6, -0.3, 0.0]]
"""Teacher weights on the critic group [x, y, t / limit, noise]: nothing on the noise, which the student lacks."""
W_UNSEEN = [[-0.8, 0.2, 0.5, 1.5], [0.1, -0.6, -0.3, -1.5]]
"""A teacher that leans on the noise term: the student cannot reproduce it (the control experiment)."""


class TwoGroupEnv:
    """A point in 2-D pushed by 2 actions; terminates beyond |3|, truncates after ``limit`` steps. Policy
    observation [x, y, t / limit]; critic observation the same plus a fresh uniform noise value per step."""

    def __init__(self, num_envs: int, limit: int = 10):
        self.num_envs, self.limit = num_envs, limit
        self.obs_dims = {"policy": 3, "critic": 4}
        self.action_spec = ActionSpec(discrete=False, n=2, low=(-1.0, -1.0), high=(1.0, 1.0))
        self.device = torch.device("cpu")
        self.gen = torch.Generator().manual_seed(0)
        self.p = torch.zeros(num_envs, 2)
        self.t = torch.zeros(num_envs)
        self.noise = torch.zeros(num_envs)

    def _obs(self):
        pol = torch.cat([self.p, (self.t / self.limit).unsqueeze(-1)], -1)
        return {"policy": pol, "critic": torch.cat([pol, self.noise.unsqueeze(-1)], -1)}

    def _fresh(self, mask):
        self.p = torch.where(mask.unsqueeze(-1), torch.rand(self.num_envs, 2, generator=self.gen) * 2 - 1, self.p)
        self.t = torch.where(mask, torch.zeros_like(self.t), self.t)

    def reset(self, seed=None):
        if seed is not None:
            self.gen.manual_seed(seed)
        self._fresh(torch.ones(self.num_envs, dtype=torch.bool))
        self.noise = torch.rand(self.num_envs, generator=self.gen) * 2 - 1
        return self._obs()

    def step(self, actions):
        self.p = self.p + 0.3 * actions.clamp(-1, 1) + 0.05 * torch.randn(self.num_envs, 2, generator=self.gen)
        self.t = self.t + 1
        reward = -self.p.norm(dim=-1)
        terminated = self.p.abs().amax(-1) > 3
        truncated = (self.t >= self.limit) & ~terminated
        final = {k: v.clone() for k, v in self._obs().items()}
        self._fresh(terminated | truncated)
        self.noise = torch.rand(self.num_envs, generator=self.gen) * 2 - 1
        return self._obs(), reward, terminated, truncated, {"final_obs": final, "log": {"distance": -reward.mean()}}

    def state_dict(self):
        return {"p": self.p.clone(), "t": self.t.clone(), "noise": self.noise.clone(), "gen": self.gen.get_state()}

    def load_state_dict(self, s):
        self.p, self.t, self.noise = s["p"].clone(), s["t"].clone(), s["noise"].clone()
        self.gen.set_state(s["gen"])

    def close(self):
        pass


def save_teacher(path: Path, weights=W_SEEN, obs_dim: int = 4, n: int = 2, memory: str = "none",
                 discrete: bool = False) -> Path:
    """A teacher checkpoint as train.py writes it: a linear actor ``a = W obs + b`` on raw observations."""
    cfg = PolicyConfig(actor_hidden_dims=(), critic_hidden_dims=(8,), normalize_obs=False, memory=memory, memory_size=4)
    spec = ActionSpec(discrete=discrete, n=n, low=(-1.0,) * n, high=(1.0,) * n)
    teacher = ActorCritic(obs_dim, None, spec, cfg)
    if memory == "none" and not discrete:
        with torch.no_grad():
            teacher.actor[0].weight.copy_(torch.tensor(weights)[:n, :obs_dim])
            teacher.actor[0].bias.copy_(torch.tensor([0.1, -0.2])[:n])
    data = {"format_version": ckpt.FORMAT_VERSION, "task": "teacher-task", "iteration": 7,
            "config": to_dict(TrainConfig(policy=cfg)), "obs_dims": {"policy": obs_dim},
            "action_spec": {"discrete": discrete, "n": n}, "policy": teacher.state_dict()}
    return ckpt.save_atomic(data, path)


def config(teacher: Path | str | None, memory: str = "none", iterations: int = 6, **algorithm) -> TrainConfig:
    alg = dict(name="distillation", teacher=None if teacher is None else str(teacher), schedule="fixed",
               learning_rate=3e-3, num_learning_epochs=4, num_mini_batches=4)
    alg.update(algorithm)
    return TrainConfig(env=EnvConfig(num_envs=16),
                       policy=PolicyConfig(actor_hidden_dims=(32, 32), critic_hidden_dims=(8,), init_noise_std=0.1,
                                           memory=memory, memory_size=16),
                       algorithm=AlgorithmConfig(**alg),
                       runner=RunnerConfig(num_steps_per_env=16, max_iterations=iterations, seed=1, torch_threads=1))


def runner_for(cfg: TrainConfig, **kw) -> OnPolicyRunner:
    return OnPolicyRunner(TwoGroupEnv(cfg.env.num_envs), cfg, task="two-group", quiet=True, **kw)


def action_error(runner: OnPolicyRunner) -> float:
    """Mean squared student-teacher action difference on a fresh rollout (the student acting)."""
    if runner.obs is None:
        runner.obs = runner.env.reset(seed=100)
    runner.collect()
    s = runner.storage
    with torch.no_grad():
        if s.hidden is not None:
            batch = next(s.recurrent_minibatches(1, 1, torch.Generator().manual_seed(0)))
        else:
            batch = s.flat()
        return float(distillation_loss(runner.policy, batch, "mse"))


# ----------------------------------------------------------------------------------------------- config errors
def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text, text
    return text


def test_fake_env_satisfies_the_protocol():
    assert isinstance(TwoGroupEnv(2), VecEnv)


@pytest.mark.parametrize("change, field", [
    (dict(schedule="adaptive"), "algorithm.schedule"),
    (dict(symmetry="augment"), "algorithm.symmetry"),
    (dict(target_kl=0.02), "algorithm.target_kl"),
    (dict(compile=True), "algorithm.compile"),
    (dict(name="dagger"), "algorithm.name"),
    (dict(distillation_loss="l1"), "algorithm.distillation_loss"),
    (dict(teacher=""), "algorithm.teacher"),
])
def test_bad_distillation_fields_are_one_line_errors(change, field):
    with pytest.raises(ConfigError) as e:
        AlgorithmConfig(**{"name": "distillation", "schedule": "fixed", **change})
    assert one_line(e).startswith(f"config error: {field}=")
    AlgorithmConfig(name="ppo", schedule="adaptive")  # the PPO defaults stay valid


def test_missing_teacher_bad_group_and_mismatches_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"algorithm\.teacher=None .*checkpoint file or run folder") as e:
        runner_for(config(None))
    one_line(e)
    with pytest.raises(CheckpointError, match="does not exist") as e:
        runner_for(config(tmp_path / "nothing.pt"))
    one_line(e)
    good = save_teacher(tmp_path / "good.pt")
    with pytest.raises(ConfigError, match=r"algorithm\.teacher_obs='privileged' .*groups: policy, critic") as e:
        runner_for(config(good, teacher_obs="privileged"))
    one_line(e)
    narrow = save_teacher(tmp_path / "narrow.pt", obs_dim=3)
    with pytest.raises(ConfigError, match=r"4 values, the width of this env's 'critic' group .*this one reads 3") as e:
        runner_for(config(narrow))
    one_line(e)
    runner_for(config(narrow, teacher_obs="policy"))  # a 3-wide teacher fits the policy group
    one_action = save_teacher(tmp_path / "one_action.pt", n=1)
    with pytest.raises(ConfigError, match=r"a teacher with 2 actions, as this env has \(this one has 1\)") as e:
        runner_for(config(one_action))
    one_line(e)
    recurrent = save_teacher(tmp_path / "recurrent.pt", memory="gru")
    with pytest.raises(ConfigError, match=r"a memoryless teacher \(this one has policy.memory=gru\)") as e:
        runner_for(config(recurrent))
    one_line(e)
    discrete = save_teacher(tmp_path / "discrete.pt", discrete=True)
    with pytest.raises(ConfigError, match="continuous actions") as e:
        runner_for(config(discrete))
    one_line(e)


def test_train_cli_refuses_a_missing_teacher_before_building_anything(tmp_path, capsys):
    import train

    run = tmp_path / "run"
    rc = train.main(["--task", "Pendulum-v1", "--run-dir", str(run), "algorithm.name=distillation",
                     "algorithm.schedule=fixed"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "algorithm.teacher=None" in err, err
    assert not run.exists()
    rc = train.main(["--task", "Pendulum-v1", "--run-dir", str(run), "algorithm.name=distillation",
                     "algorithm.schedule=adaptive", f"algorithm.teacher={tmp_path / 'missing'}"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "algorithm.schedule='adaptive'" in err, err
    rc = train.main(["--task", "Pendulum-v1", "--run-dir", str(run), "algorithm.name=distillation",
                     "algorithm.schedule=fixed", f"algorithm.teacher={tmp_path / 'missing'}"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "does not exist" in err, err
    assert not run.exists()


# ------------------------------------------------------------------------------------------------- learning
@pytest.mark.parametrize("memory", ["none", "lstm", "gru"])
def test_student_learns_a_teacher_it_can_represent(tmp_path, memory):
    teacher = save_teacher(tmp_path / "teacher.pt")
    runner = runner_for(config(teacher, memory=memory, iterations=6))
    before = action_error(runner)
    teacher_state = {k: v.clone() for k, v in runner.alg.teacher.state_dict().items()}
    std = runner.policy.head.std().clone()
    critic = [p.clone() for p in runner.policy.critic_parameters()]
    runner.learn()
    after = action_error(runner)
    assert after < before / 10, (before, after)
    # The teacher, the action std and the critic never change.
    assert all(torch.equal(v, runner.alg.teacher.state_dict()[k]) for k, v in teacher_state.items())
    assert all(torch.equal(v, ckpt.load(teacher)["policy"][k]) for k, v in teacher_state.items())
    assert torch.equal(runner.policy.head.std(), std)
    assert all(torch.equal(a, b) for a, b in zip(critic, runner.policy.critic_parameters(), strict=True))


def test_student_cannot_learn_what_it_does_not_see(tmp_path):
    """The control: the same run against a teacher that leans on the critic-only noise stays far above 1/10."""
    teacher = save_teacher(tmp_path / "teacher.pt", weights=W_UNSEEN)
    runner = runner_for(config(teacher, iterations=6))
    before = action_error(runner)
    runner.learn()
    after = action_error(runner)
    assert after > before / 4, (before, after)


def test_huber_loss_learns_and_logs_its_own_scalars(tmp_path, capsys):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    teacher = save_teacher(tmp_path / "teacher.pt")
    run = tmp_path / "run"
    runner = OnPolicyRunner(TwoGroupEnv(16), config(teacher, iterations=3, distillation_loss="huber"), task="two-group",
                            run_dir=run)
    runner.learn()
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("it ")]
    assert len(lines) == 3 and all(" dloss " in ln and " lr " in ln for ln in lines), lines
    acc = EventAccumulator(str(run))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    for tag in ("Loss/distillation", "Loss/learning_rate", "Loss/grad_norm", "Policy/mean_std", "Env/distance"):
        assert tag in tags, tag
    assert "Loss/value" not in tags and "Policy/explained_variance" not in tags
    losses = [e.value for e in acc.Scalars("Loss/distillation")]
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------------------------- checkpoint and resume
@pytest.mark.parametrize("memory", ["none", "lstm"])
def test_k_plus_k_resumed_equals_2k_straight_without_the_teacher_file(tmp_path, memory):
    teacher = save_teacher(tmp_path / "teacher.pt")
    cfg = config(teacher, memory=memory, iterations=4)
    straight = runner_for(cfg)
    straight.learn()
    first = runner_for(cfg)
    first.learn(num_iterations=2)
    path = first.save(tmp_path / "model_2.pt")
    data = ckpt.load(path)
    # The teacher's weights are inside the student's checkpoint, and the student's policy is the student's.
    record = data["algorithm"]["teacher"]
    assert all(torch.equal(v, ckpt.load(teacher)["policy"][k]) for k, v in record["policy"].items())
    assert record["source"] == str(teacher) and record["obs_dims"] == {"policy": 4}
    assert set(data["policy"]) == set(first.policy.state_dict())
    teacher.unlink()  # resume and play need only the student's checkpoint
    resumed = runner_for(cfg, prepared=data["algorithm"]["teacher"])
    resumed.load_state_dict(data)
    resumed.learn()
    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert float(straight.alg.lr) == float(resumed.alg.lr)


def test_resume_without_the_optimizer_state_would_differ(tmp_path):
    """The exact-resume test above can fail: a fresh optimizer instead of the saved one changes the run."""
    teacher = save_teacher(tmp_path / "teacher.pt")
    cfg = config(teacher, iterations=4)
    straight = runner_for(cfg)
    straight.learn()
    first = runner_for(cfg)
    first.learn(num_iterations=2)
    data = first.state_dict()
    data["algorithm"]["optimizer"] = runner_for(cfg).alg.optimizer.state_dict()
    resumed = runner_for(cfg)
    resumed.load_state_dict(data)
    resumed.learn()
    a, b = straight.policy.state_dict(), resumed.policy.state_dict()
    assert any(not torch.equal(a[k], b[k]) for k in a)


def test_resume_with_another_algorithm_is_a_one_line_error(tmp_path):
    teacher = save_teacher(tmp_path / "teacher.pt")
    student = runner_for(config(teacher, iterations=1))
    student.learn()
    data = student.state_dict()
    ppo = TrainConfig(env=EnvConfig(num_envs=16), policy=student.cfg.policy,
                      algorithm=AlgorithmConfig(num_mini_batches=4), runner=student.cfg.runner)
    with pytest.raises(CheckpointError, match=r"algorithm\.name=distillation, this run has algorithm\.name=ppo") as e:
        runner_for(ppo).load_state_dict(data)
    one_line(e)


# ------------------------------------------------------------------------------------------------ host syncs
def test_distillation_collect_and_update_make_no_host_syncs(tmp_path):
    from tests.rl_core.test_host_syncs import CountSyncs

    runner = runner_for(config(save_teacher(tmp_path / "teacher.pt"), iterations=3, schedule="linear"))
    runner.obs = runner.env.reset(seed=0)
    runner.collect()
    runner.alg.update()  # warm-up
    with CountSyncs() as counter:
        runner.collect()
        runner.alg.update()
    assert counter.calls == []
    assert runner.storage.critic_obs is None and runner.storage.teacher_actions is not None


# ------------------------------------------------------------------------------ CLI: train, resume, play, export
def test_distilled_recurrent_student_trains_resumes_plays_and_exports_from_the_cli(tmp_path, capsys):
    """Pendulum: a PPO teacher (1 iteration; its quality does not matter here), a GRU student distilled from it
    by train.py, resumed after the teacher's run folder is gone, then evaluated and exported by play.py."""
    import shutil

    import play
    import train

    small = ["env.num_envs=4", "runner.num_steps_per_env=32", "algorithm.num_mini_batches=2",
             "algorithm.num_learning_epochs=1"]
    teacher_run, student_run = tmp_path / "teacher", tmp_path / "student"
    assert train.main(["--task", "Pendulum-v1", "--max-iterations", "1", "--run-dir", str(teacher_run), "--quiet",
                       *small]) == 0
    distill = ["algorithm.name=distillation", "algorithm.schedule=fixed", f"algorithm.teacher={teacher_run}",
               "algorithm.teacher_obs=policy", "policy.memory=gru", "policy.memory_size=8"]
    assert train.main(["--task", "Pendulum-v1", "--max-iterations", "2", "--run-dir", str(student_run), "--quiet",
                       *small, *distill]) == 0
    shutil.rmtree(teacher_run)
    assert train.main(["--resume", str(student_run), "--max-iterations", "3", "--quiet"]) == 0
    assert ckpt.load_newest(student_run)[1]["iteration"] == 3
    capsys.readouterr()
    onnx, jit = tmp_path / "student.onnx", tmp_path / "student.pt"
    assert play.main(["--checkpoint", str(student_run), "--episodes", "1", "--export-onnx", str(onnx),
                      "--export-jit", str(jit)]) == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "state carried" in out, out
    from deploy.onnx_policy import OnnxPolicy

    policy = OnnxPolicy(str(onnx))
    assert policy.metadata["recurrent"]["memory"] == "gru"
    # A resume that names another teacher is refused (the checkpoint holds its own).
    rc = train.main(["--resume", str(student_run), "--max-iterations", "4", "algorithm.teacher=elsewhere"])
    assert rc == 2 and "when resuming" in capsys.readouterr().err


def test_dataclass_round_trip_keeps_the_algorithm_fields():
    cfg = dataclasses.replace(AlgorithmConfig(), name="distillation", schedule="fixed", teacher="runs/x",
                              teacher_obs="policy", distillation_loss="huber")
    from rl_core.config_io import from_dict

    assert from_dict(AlgorithmConfig(), to_dict(cfg)) == cfg


def test_quadruped_blind_distill_task_takes_a_quadruped_flat_teacher(tmp_path, capsys):
    """The registered task: blind LSTM student, teacher on the 48-wide critic group; without a teacher it stops
    with one line before building anything; with a (1-iteration) quadruped-flat teacher it trains."""
    import train
    from configs.catalog import get_task

    cfg = get_task("quadruped-flat-blind-distill").default_config()
    assert cfg.algorithm.name == "distillation" and cfg.algorithm.teacher is None
    assert cfg.algorithm.teacher_obs == "critic" and cfg.policy.memory == "lstm"
    assert cfg.env.policy_exclude == ("base_lin_vel",)  # type: ignore[attr-defined]
    small = ["--num-envs", "4", "--max-iterations", "1", "--quiet", "runner.num_steps_per_env=4"]
    student = tmp_path / "student"
    assert train.main(["--task", "quadruped-flat-blind-distill", "--run-dir", str(student), *small]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "algorithm.teacher=None" in err and not student.exists(), err
    teacher = tmp_path / "teacher"
    assert train.main(["--task", "quadruped-flat", "--run-dir", str(teacher), *small]) == 0
    assert train.main(["--task", "quadruped-flat-blind-distill", "--run-dir", str(student), *small,
                       "algorithm.num_mini_batches=2", f"algorithm.teacher={teacher}"]) == 0
    _, data = ckpt.load_newest(student)
    assert data["obs_dims"] == {"policy": 45, "critic": 48}
    record = data["algorithm"]["teacher"]
    assert record["obs_dims"] == {"policy": 48} and record["task"] == "quadruped-flat"
