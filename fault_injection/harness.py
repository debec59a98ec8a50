"""The fault-injection harness: every fault the trainer must survive, as functions that inject it and report.

``tools/experiments/fault_campaign.py`` runs them many times and prints the fault table (docs/reliability.md);
``tests/apps/test_faults.py`` runs them with fewer repeats. Neither imports the other: both import this.

Faults: a bad value for every CLI flag of train.py and play.py and for config overrides; damaged, foreign and
malicious checkpoints (given to play.py and to train.py --resume); NaN physics; NaN learning; SIGKILL at random
moments with a save every iteration (so some kills land inside a save); a full disk and a folder that
became read-only during a checkpoint save; and memory growth over many iterations. Each row of the fault table
says how often the fault was tried and what came of it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

NAN_AFTER_ENV = "LEGGED_MJX_NAN_AFTER"
"""Environment variable: the step count after which NanRewardCartPole's rewards are NaN."""
BAD_REWARD_ENV = "LEGGED_MJX_BAD_REWARD"
"""Environment variable: the reward NanRewardCartPole gives after that step (default nan; 1e30 is finite but
overflows the losses)."""

# --------------------------------------------------------------------------------------------- CLI cases
# (script, argv, what the one-line error must contain). "{ckpt}" is a valid CartPole checkpoint.
CLI_CASES: list[tuple[str, list[str], str]] = [
    ("train", ["--task", "NoSuchTask-v9"], "unknown task 'NoSuchTask-v9'"),
    ("train", ["--task", "quadruped-flt"], "did you mean quadruped-flat"),
    ("train", ["--seed", "abc"], "argument --seed: invalid int value"),
    ("train", ["--seed", "-1"], "runner.seed=-1 is not allowed"),
    ("train", ["--num-envs", "0"], "env.num_envs=0 is not allowed"),
    ("train", ["--num-envs", "many"], "argument --num-envs: invalid int value"),
    ("train", ["--max-iterations", "0"], "runner.max_iterations=0 is not allowed"),
    ("train", ["--max-env-steps", "-5"], "runner.max_env_steps=-5 is not allowed"),
    ("train", ["--max-iterations", "5", "--max-env-steps", "5"], "not allowed with argument"),
    ("train", ["--device", "tpu"], "runner.device='tpu' is not allowed"),
    ("train", ["--device", "cuda:7"], "runner.device='cuda:7'"),
    ("train", ["--run-dir", "/proc/no/such/dir"], "--run-dir='/proc/no/such/dir' cannot be created"),
    ("train", ["--resume", "/no/such/run"], "/no/such/run does not exist"),
    ("train", ["--bogus-flag"], "unrecognized arguments: --bogus-flag"),
    ("train", ["algorithm.gamma=2.0"], "algorithm.gamma=2.0 is not allowed"),
    ("train", ["algorithm.nope=1"], "override key='algorithm.nope' is not allowed"),
    ("train", ["gamma"], "override='gamma' is not allowed"),
    ("train", ["policy.activation=swish"], "policy.activation='swish' is not allowed"),
    ("train", ["policy.actor_hidden_dims=[0]"], "policy.actor_hidden_dims"),
    ("train", ["runner.num_steps_per_env=0"], "runner.num_steps_per_env=0 is not allowed"),
    ("train", ["algorithm.num_mini_batches=7"], "algorithm.num_mini_batches=7"),
    ("train", ["algorithm.schedule=cosine"], "algorithm.schedule='cosine' is not allowed"),
    ("train", ["--task", "quadruped-flat", "env.backend=physx"], "env.backend='physx' is not allowed"),
    ("train", ["--task", "quadruped-flat", "env.commands.lin_vel_x=[1,-1]"], "env.commands.lin_vel_x"),
    ("train", ["--task", "quadruped-flat", "env.decimation=0"], "env.decimation=0 is not allowed"),
    ("play", [], "--checkpoint is required"),
    ("play", ["--checkpoint", "/no/such.pt"], "/no/such.pt does not exist"),
    ("play", ["--checkpoint", "{ckpt}", "--episodes", "-1"], "--episodes=-1 is not allowed"),
    ("play", ["--checkpoint", "{ckpt}", "--episodes", "x"], "argument --episodes: invalid int value"),
    ("play", ["--checkpoint", "{ckpt}", "--num-envs", "0"], "--num-envs=0 is not allowed"),
    ("play", ["--checkpoint", "{ckpt}", "--seed", "1.5"], "argument --seed: invalid int value"),
    ("play", ["--checkpoint", "{ckpt}", "--backend", "physx"], "argument --backend: invalid choice"),
    ("play", ["--checkpoint", "{ckpt}", "--backend", "native"], "--backend applies to the MuJoCo tasks"),
    ("play", ["--checkpoint", "{ckpt}", "--task", "Pendulum-v1"],
     "was trained on task 'CartPole-v1', not 'Pendulum-v1'"),
    ("play", ["--checkpoint", "{ckpt}", "--json", "out.yaml"], "--json=out.yaml is not allowed"),
    ("play", ["--checkpoint", "{ckpt}", "--video", "out.avi"], "--video=out.avi is not allowed"),
    ("play", ["--checkpoint", "{ckpt}", "--video", "out.mp4", "--video-env", "99"], "--video-env=99 is not allowed"),
    ("play", ["--checkpoint", "{ckpt}", "--video-seconds", "0"], "--video-seconds=0.0 is not allowed"),
    ("play", ["--checkpoint", "{ckpt}", "--viewer"], "--viewer needs a display"),
    ("play", ["--checkpoint", "{ckpt}", "--export-onnx", "policy.txt"], "--export-onnx=policy.txt is not allowed"),
    ("play", ["--sim2sim", "/no/such.onnx"], "policy file /no/such.onnx does not exist"),
    ("play", ["--sim2sim", "{junk}"], "is not a readable ONNX model"),
    ("play", ["--sim2sim", "x.onnx", "--export-jit", "p.pt"], "--export-jit needs --checkpoint"),
]


class _EnvCreated(Exception):
    pass


@contextlib.contextmanager
def _no_env_creation():
    """Raise if an env is built: bad input must be rejected before any expensive work."""
    from envs.gym import GymVecEnv
    from envs.tasks.locomotion import LocomotionEnv

    saved = GymVecEnv.__init__, LocomotionEnv.__init__

    def refuse(self, *a, **k):
        raise _EnvCreated()

    GymVecEnv.__init__ = LocomotionEnv.__init__ = refuse
    try:
        yield
    finally:
        GymVecEnv.__init__, LocomotionEnv.__init__ = saved


def run_cli(script: str, argv: list[str], workdir: Path) -> dict[str, Any]:
    """Run train.main / play.main in this process with no env allowed; the exit code, stderr and what was written."""
    import play
    import train

    main = {"train": train.main, "play": play.main}[script]
    err, out = io.StringIO(), io.StringIO()
    before = set(workdir.rglob("*"))
    cwd = os.getcwd()
    env_created = False
    os.chdir(workdir)
    saved_display = os.environ.pop("DISPLAY", None)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), _no_env_creation():
            try:
                code = main(argv)
            except SystemExit as e:
                code = int(e.code or 0)
            except _EnvCreated:
                code, env_created = -1, True
    finally:
        os.chdir(cwd)
        if saved_display is not None:
            os.environ["DISPLAY"] = saved_display
    return {"code": code, "stderr": err.getvalue(), "env_created": env_created,
            "written": sorted(str(p.relative_to(workdir)) for p in set(workdir.rglob("*")) - before)}


def one_line_error(result: dict[str, Any], expected: str) -> bool:
    """Exit status 2, exactly one line on stderr that contains ``expected``, no traceback, no env, nothing written."""
    lines = result["stderr"].strip().splitlines()
    return (result["code"] == 2 and len(lines) == 1 and expected in lines[0] and lines[0].startswith("error: ")
            and not result["env_created"] and not result["written"])


# ------------------------------------------------------------------------------------- checkpoint cases
def make_checkpoint(folder: Path) -> Path:
    """A tiny trained CartPole run (2 iterations, a checkpoint after each); returns the run folder."""
    from fault_injection.cartpole import make_runner, tiny_cartpole
    from rl_core.config_io import dump_yaml

    cfg = tiny_cartpole(iterations=2)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=1))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(dump_yaml(cfg))
    make_runner(cfg, run_dir=folder).learn()
    return folder


class _Evil:
    """Unpickling this would create the file ``marker``: a checkpoint loader that runs it has been taken over."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def damaged_checkpoints(good: Path, out: Path, repeats: int, rng: random.Random, marker: Path
                        ) -> list[tuple[str, Path]]:
    """(kind, file) pairs: truncations and bit flips at random places, plus one file of each other kind."""
    import torch

    from rl_core import checkpoint as ckpt

    out.mkdir(parents=True, exist_ok=True)
    blob = good.read_bytes()
    cases: list[tuple[str, Path]] = []
    for i in range(repeats):
        p = out / f"truncated_{i}.pt"
        p.write_bytes(blob[: rng.randrange(0, len(blob))])
        cases.append(("truncated at a random byte", p))
        flipped = bytearray(blob)
        flipped[rng.randrange(len(blob))] ^= 1 << rng.randrange(8)
        p = out / f"bitflip_{i}.pt"
        p.write_bytes(bytes(flipped))
        cases.append(("one random bit flipped", p))
    (out / "empty.pt").write_bytes(b"")
    (out / "junk.pt").write_bytes(os.urandom(4096))
    torch.save({"weights": torch.zeros(3)}, out / "foreign.pt")
    torch.save({"format_version": 2, "payload": _Evil(marker)}, out / "malicious.pt")
    data = torch.load(good, weights_only=True)
    ckpt.save_atomic({**{k: v for k, v in data.items() if k != "checksum"}, "format_version": 99}, out / "future.pt")
    ckpt.save_atomic({**{k: v for k, v in data.items() if k != "checksum"}, "obs_dims": {"policy": 5}},
                     out / "other_obs_size.pt")
    ckpt.save_atomic({**{k: v for k, v in data.items() if k != "checksum"}, "task": "Acrobot-v1"},
                     out / "other_task.pt")
    cases += [("empty file", out / "empty.pt"), ("random bytes", out / "junk.pt"),
              ("foreign torch file", out / "foreign.pt"),
              ("malicious pickle (would write a file)", out / "malicious.pt"),
              ("newer format version", out / "future.pt"), ("other observation size", out / "other_obs_size.pt"),
              ("checkpoint of another task", out / "other_task.pt")]
    return cases


def try_checkpoint(path: Path, good_checksum: str, workdir: Path, marker: Path) -> str:
    """Give ``path`` to play.py and to train.py --resume; the outcome of both (they must agree)."""
    import torch

    from rl_core import checkpoint as ckpt

    outcomes = set()
    for script, argv in (("play", ["--checkpoint", str(path), "--episodes", "1", "--task", "CartPole-v1"]),
                         ("train", ["--resume", str(path), "--task", "CartPole-v1",
                                    "--run-dir", str(workdir / "resumed"), "--quiet", "--max-iterations", "2"])):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                import play
                import train

                code = {"play": play.main, "train": train.main}[script](argv)
            except Exception as e:  # noqa: BLE001 - a crash is an outcome to report
                outcomes.add(f"crash ({type(e).__name__})")
                continue
        lines = err.getvalue().strip().splitlines()
        if code == 2 and len(lines) == 1 and lines[0].startswith("error: "):
            outcomes.add("clear error")
        elif code == 0:
            same = ckpt.checksum(torch.load(path, weights_only=True)) == good_checksum
            outcomes.add("loaded, content intact" if same else "LOADED ALTERED CONTENT")
        else:
            outcomes.add(f"exit {code}: {lines[-1] if lines else ''}")
    if marker.exists():
        outcomes.add("MALICIOUS CODE RAN")
    return " / ".join(sorted(outcomes))


# ------------------------------------------------------------------------------------ process faults
class NanRewardCartPole:
    """CartPole whose rewards turn NaN (or ``$LEGGED_MJX_BAD_REWARD``) after ``$LEGGED_MJX_NAN_AFTER`` steps
    (registered in a child process)."""

    def __new__(cls, **kwargs):
        import gymnasium as gym

        after = int(os.environ.get(NAN_AFTER_ENV, "200"))
        bad = float(os.environ.get(BAD_REWARD_ENV, "nan"))

        class Wrapper(gym.Wrapper):
            steps = 0

            def step(self, action):
                obs, rew, term, trunc, info = self.env.step(action)
                Wrapper.steps += 1
                return obs, bad if Wrapper.steps > after else rew, term, trunc, info

        return Wrapper(gym.make("CartPole-v1", **kwargs).unwrapped)


STEP_SLEEP_ENV = "LEGGED_MJX_STEP_SLEEP"
"""Environment variable: seconds SlowCartPole sleeps in every step of every env."""


class SlowCartPole:
    """CartPole whose every step sleeps ``$LEGGED_MJX_STEP_SLEEP`` s: iterations of a known, load-independent length
    (a child sends signals into the middle of one)."""

    def __new__(cls, **kwargs):
        import gymnasium as gym

        pause = float(os.environ.get(STEP_SLEEP_ENV, "0.02"))

        class Wrapper(gym.Wrapper):
            def step(self, action):
                time.sleep(pause)
                return self.env.step(action)

        return Wrapper(gym.make("CartPole-v1", **kwargs).unwrapped)


TEST_TASKS = ("import sys, gymnasium; "
              "gymnasium.register('NanCartPole-v0', entry_point='fault_injection.harness:NanRewardCartPole', "
              "max_episode_steps=500); "
              "gymnasium.register('SlowCartPole-v0', entry_point='fault_injection.harness:SlowCartPole', "
              "max_episode_steps=500); "
              "import train; sys.exit(train.main(sys.argv[1:]))")
"""``python -c TEST_TASKS ARGS``: train.py with the harness's own Gymnasium ids registered."""


CHEAP_UPDATE = ("runner.torch_threads=1", "algorithm.num_mini_batches=1", "algorithm.num_learning_epochs=1")
"""A harness id gets Gymnasium's generic defaults (10 epochs x 8 minibatches): an update as cheap as CartPole's."""


def nan_learning_run(run: Path, nan_after: int, reward: str = "nan") -> subprocess.CompletedProcess:
    """train.py on NanRewardCartPole (4 envs x 16 steps, ``CHEAP_UPDATE``, a save every iteration) in a child
    process; ``reward``: what the rewards become after ``nan_after`` steps (nan: masked by the learner, the run
    stops on the sustained diverged share; 1e30: finite, the losses overflow)."""
    return subprocess.run([sys.executable, "-c", TEST_TASKS, "--task", "NanCartPole-v0", "--num-envs", "4",
                           "--max-iterations", "100", "--run-dir", str(run), "--quiet", "runner.num_steps_per_env=16",
                           "runner.save_interval=1", *CHEAP_UPDATE,
                           # a finite bad reward would be scaled down by the generic config's reward normalizer
                           *([] if reward == "nan" else ["algorithm.normalize_rewards=false"])],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, NAN_AFTER_ENV: str(nan_after), BAD_REWARD_ENV: reward})


_EXEC_WITH_SIGINT = ("import os, signal, sys; "
                     "signal.signal(signal.SIGINT, signal.SIG_IGN if sys.argv[1] == 'ignored' else signal.SIG_DFL); "
                     "os.execv(sys.argv[2], sys.argv[2:])")


def with_sigint(cmd: list[str], disposition: str = "default") -> list[str]:
    """``cmd`` (its first item an absolute path) started with SIGINT at its ``default`` disposition, whatever this
    process inherited (a suite started from a background shell script runs with SIGINT ignored, and so would its
    children), or ``ignored`` (as under ``nohup`` / in a background job of a non-interactive shell). A small
    Python launcher sets it and execs ``cmd``: a ``preexec_fn`` would run Python in a forked child of a
    multithreaded process (JAX, torch), which can deadlock."""
    assert disposition in ("default", "ignored")
    return [sys.executable, "-c", _EXEC_WITH_SIGINT, disposition, *cmd]


class ChildOutput:
    """Collects a child's stdout and stderr lines as they come (one thread each, so neither pipe fills up)."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str] = []
        self.err_lines: list[str] = []
        self._threads = [threading.Thread(target=self._pump, args=(stream, lines), daemon=True)
                         for stream, lines in ((proc.stdout, self.lines), (proc.stderr, self.err_lines))]
        for t in self._threads:
            t.start()

    @staticmethod
    def _pump(stream: Any, lines: list[str]) -> None:
        for line in stream:
            lines.append(line)

    def join(self, timeout: float) -> None:
        for t in self._threads:
            t.join(timeout=timeout)

    @property
    def stderr(self) -> str:
        return "".join(self.err_lines)

    def iterations(self) -> list[int]:
        return [int(m.group(1)) for line in list(self.lines) if (m := re.match(r"it\s+(\d+)/", line))]


def training_command(run: Path, resume: bool = False, save_interval: int = 1, extra: tuple[str, ...] = (),
                     task: str = "CartPole-v1") -> list[str]:
    """train.py on CartPole (4 envs x 8 steps), or ``--resume RUN``; ``extra``: more flags and overrides; ``task``:
    also one of the harness's (``TEST_TASKS``)."""
    head = (["--resume", str(run)] if resume else
            ["--task", task, "--num-envs", "4", "--run-dir", str(run), "runner.num_steps_per_env=8",
             f"runner.save_interval={save_interval}"])
    if task == "CartPole-v1":
        return [sys.executable, str(ROOT / "train.py"), *head, "--max-iterations", "100000", *extra]
    return [sys.executable, "-c", TEST_TASKS, *head, "--max-iterations", "100000", *CHEAP_UPDATE, *extra]


def start_training(run: Path, resume: bool, save_interval: int = 1, nohup: bool = False,
                   extra: tuple[str, ...] = (), task: str = "CartPole-v1") -> tuple[subprocess.Popen, ChildOutput]:
    """A train.py child printing a line per iteration (``training_command``); SIGINT at its default disposition,
    or ignored (``nohup``)."""
    cmd = with_sigint(training_command(run, resume, save_interval, extra, task), "ignored" if nohup else "default")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=ROOT)
    return proc, ChildOutput(proc)


def wait_for_iterations(proc: subprocess.Popen, reader: ChildOutput, n: int, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while len(reader.iterations()) < n and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    if len(reader.iterations()) < n:
        proc.kill()
        proc.wait(timeout=30)
        reader.join(timeout=10)
        raise RuntimeError(f"training child made no progress: {reader.stderr}")


def wait_for_exit(proc: subprocess.Popen, timeout: float) -> int:
    """The child's exit status; a child still running after ``timeout`` seconds is killed and reported."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
        raise RuntimeError(f"training child still running {timeout:.0f} s after the signal; killed") from None


def wait_for_save(folder: Path, timeout: float = 30.0) -> bool:
    """Spin until a checkpoint's temporary file appears in ``folder`` (a save in progress); False on time-out."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if any(e.name.endswith(".tmp") for e in os.scandir(folder)):
                return True
        except FileNotFoundError:
            pass
    return False


def kill_round(run: Path, resume: bool, rng: random.Random, during_save: bool = False) -> dict[str, Any]:
    """Start (or resume) training and SIGKILL it: at a random moment, or (``during_save``) as soon as a checkpoint's
    temporary file appears in the folder. Returns what the newest verifying checkpoint holds."""
    from rl_core import checkpoint as ckpt

    proc, reader = start_training(run, resume)
    wait_for_iterations(proc, reader, 2)
    if during_save:
        wait_for_save(run / "checkpoints")
    else:
        time.sleep(rng.uniform(0.0, 0.4))
    proc.send_signal(signal.SIGKILL)
    wait_for_exit(proc, 30)
    reader.join(timeout=10)
    mid_save = bool(list((run / "checkpoints").glob(".model_*.tmp")))
    path, data = ckpt.load_newest(run)
    logged = max(reader.iterations())
    return {"logged": logged, "checkpoint": data["iteration"], "mid_save": mid_save, "env_steps": data["env_steps"]}


def nan_physics_round(seed: int) -> dict[str, Any]:
    """A small quadruped run (native backend) with NaN velocities written into random envs at a random step."""
    import torch

    from configs.catalog import get_task
    from envs.robots.quadruped import QUADRUPED
    from envs.tasks.locomotion import LocomotionEnv
    from envs.tasks.locomotion.config import LocomotionEnvConfig
    from rl_core.runner import OnPolicyRunner

    rng = random.Random(seed)
    cfg = get_task("quadruped-flat").default_config()
    assert isinstance(cfg.env, LocomotionEnvConfig)
    cfg = dataclasses.replace(
        cfg, env=dataclasses.replace(cfg.env, num_envs=8, backend="native"),
        runner=dataclasses.replace(cfg.runner, num_steps_per_env=6, max_iterations=3, device="cpu", seed=seed),
        algorithm=dataclasses.replace(cfg.algorithm, num_mini_batches=2, num_learning_epochs=1))
    ids = rng.sample(range(8), rng.randint(1, 3))
    assert isinstance(cfg.env, LocomotionEnvConfig)
    env = NanInjector(LocomotionEnv(cfg.env, QUADRUPED), ids, at=rng.randrange(0, 12))
    runner = OnPolicyRunner(env, cfg, task="quadruped-flat", quiet=True)
    runner.learn()
    finite = all(bool(torch.isfinite(p).all()) for p in runner.policy.parameters())
    return {"injected": len(ids), "detected": env.detected, "iterations": runner.iteration, "finite": finite}


class NanInjector:
    """Wraps a LocomotionEnv: NaN velocities into envs ``ids`` before step ``at``; counts the invalid transitions."""

    def __init__(self, env: Any, ids: list[int], at: int):
        self.env, self.ids, self.at, self.t, self.detected = env, ids, at, 0, 0
        self.num_envs, self.obs_dims = env.num_envs, env.obs_dims
        self.action_spec, self.device = env.action_spec, env.device

    def reset(self, seed=None):
        return self.env.reset(seed)

    def step(self, actions):
        import torch

        if self.t == self.at:
            mask = torch.zeros(self.num_envs, dtype=torch.bool)
            mask[self.ids] = True
            self.env.physics.set_velocity(mask, torch.full((self.num_envs, self.env.model.nv), float("nan")))
        self.t += 1
        out = self.env.step(actions)
        self.detected += int(out[4]["invalid"].sum())
        return out

    def close(self):
        self.env.close()


def rss_growth_mb(warmup: int = 100, iterations: int = 200) -> float:
    """RSS growth of this process over ``iterations`` CartPole iterations after ``warmup`` (checkpoints every 50)."""
    from fault_injection.cartpole import make_runner, tiny_cartpole

    def rss() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    cfg = tiny_cartpole(iterations=warmup + iterations)
    cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=50))
    with tempfile.TemporaryDirectory() as d:
        runner = make_runner(cfg, run_dir=d)
        runner.learn(warmup)
        start = rss()
        runner.learn(iterations)
        return rss() - start


# ----------------------------------------------------------------------------------------------- main


# ------------------------------------------------------------------------------------------- OS faults
FULL_DISK = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")
"""What torch.save raises when the disk fills up under it."""


@contextlib.contextmanager
def small_disk(folder: Path, size_kib: int):
    """A tmpfs of ``size_kib`` KiB mounted at ``folder`` (needs root); raises OSError where it cannot be mounted."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"cannot mount a tmpfs at {folder}: {done.stderr.strip() or done.returncode}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def disk_full_round(disk: Path, size_kib: int = 1024) -> dict[str, Any]:
    """CartPole training with a save every iteration into a run folder on a small disk, until the disk is full;
    then the newest checkpoint that verifies is copied to a roomy folder and resumed there."""
    import shutil

    from rl_core import checkpoint as ckpt

    with small_disk(disk, size_kib):
        run = disk / "run"
        proc, reader = start_training(run, resume=False)
        code = wait_for_exit(proc, 300)
        reader.join(timeout=10)
        err = reader.stderr
        path, data = ckpt.load_newest(run)
        leftovers = list((run / "checkpoints").glob(".model_*.tmp"))
        safe = disk.parent / f"{disk.name}_copy"
        shutil.copytree(run, safe, dirs_exist_ok=True)
    resumed = subprocess.run([sys.executable, str(ROOT / "train.py"), "--resume", str(safe), "--max-iterations",
                              str(data["iteration"] + 2)], capture_output=True, text=True, timeout=300)
    return {"code": code, "stderr": err, "logged": max(reader.iterations(), default=0), "checkpoint": data["iteration"],
            "newest": str(path), "leftovers": len(leftovers), "resume_code": resumed.returncode,
            "resume_stderr": resumed.stderr}


def failing_save_round(run: Path, error: BaseException, after_saves: int = 2) -> dict[str, Any]:
    """In-process CartPole training whose checkpoint write raises ``error`` after ``after_saves`` good saves (torch
    reports a full disk as a RuntimeError; a folder that became read-only, as PermissionError / EROFS)."""
    from unittest import mock

    import torch

    from contract.errors import UserError
    from fault_injection.cartpole import make_runner, tiny_cartpole
    from rl_core import checkpoint as ckpt

    cfg = tiny_cartpole(iterations=6)
    runner = make_runner(dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, save_interval=1)), run)
    real_save, calls = torch.save, [0]

    def save(obj: Any, f: Any, *a: Any, **k: Any) -> None:
        calls[0] += 1
        if calls[0] > after_saves:
            f.write(b"partial")  # a write that got part-way
            raise error
        real_save(obj, f, *a, **k)

    message = ""
    with mock.patch.object(torch, "save", save):
        try:
            runner.learn()
        except UserError as e:
            message = str(e)
    path, data = ckpt.load_newest(run)
    return {"message": message, "newest": path, "checkpoint": data["iteration"],
            "leftovers": len(list((run / "checkpoints").glob(".model_*.tmp")))}
