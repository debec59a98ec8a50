"""Ours and mjbatch's Go1 joystick example on the same cores in one run: physics and rollout per world-substep, and
end-to-end samples/s, each as the ratio ours / theirs (issue 48).

    python -m bench.mjbatch_side_by_side --setup [--venv bench/.venv-mjbatch]     # once: the bench's own venv
    python -m tests.menagerie_models /tmp/menagerie                                 # no Go1 file? the Go2-style model
    python -m bench.mjbatch_side_by_side --mjbatch-src PATH --go1 /tmp/menagerie/unitree_go2/go2.xml [--rounds 5]
        [--tasks quadruped-flat,menagerie:unitree_go2] [--num-envs 1024] [--torch-threads N] [--json FILE]

mjbatch 0.1.4 pins ``mujoco==3.14.0`` and this repo runs on mujoco 4.0, so their side runs in its own venv
(``--setup``: ``pip install mjbatch==0.1.4 mujoco==3.14.0`` into ``--venv``, plus a ``.pth`` line that appends this
venv's site-packages for torch, after the bench venv's own mujoco and numpy). Each side is a child process
(``bench/mjbatch_ours.py`` per our task with this venv's python, ``bench/mjbatch_theirs.py`` with the bench venv's,
which runs the example file of the ``--mjbatch-src`` checkout). The children are built and warmed up (one training
iteration) one after the other, then stay alive and take turns command by command, one side running at a time, for
``--rounds`` rounds (the order reversed every other round), so that the machine's load, which changes within
seconds on a shared machine, falls on both sides alike. A round is:

- physics: ``--physics-steps`` control steps of raw stepping of all worlds from their current states with the
  controls held (theirs: ``Batch.step(nstep=DECIMATION)``; ours: the backend's ``step``, ``decimation`` substeps);
- the engines alone: the example's own model (its ``build_model``: solver, cone, timestep, feet-only contacts) from
  its keyframe, servos holding it, on mjbatch 0.1.4 (the example's side) and on mujoco 4.0's ``mujoco.batch``
  (``bench/mjbatch_engine.py``, the same model built by the same code under this venv's mujoco);
- one training iteration: the rollout as each trainer collects it (theirs: the example's ``rollout`` and ``gae``:
  policy inference, task logic, resets, buffers, returns; ours: ``runner.collect()``: the same), with the physics
  inside it timed apart, then the update (theirs: ``update`` and copying the learner into the actor, as its
  ``train`` loop; ours: ``runner.alg.update()``): end-to-end samples/s.

Times per physics substep are microseconds per world-substep (seconds / (control steps x worlds x substeps)), so a
different decimation or timestep on each side is counted per substep; the rollout is also given per world-control-step
(per simulated second when both sides step their policies at the same rate). A ratio is ours'
speed over theirs': theirs' us / ours' us, and ours' samples/s / theirs' (above 1: ours faster); each round's ratio
is taken from the numbers of that round, and the table gives their median over the rounds with the range.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import site
import statistics
import subprocess
import sys
import tempfile
import venv as venv_module
from pathlib import Path
from typing import Any

from contract.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = ROOT / "bench" / ".venv-mjbatch"
EXAMPLE = Path("examples") / "go1_joystick.py"
"""The example's file inside a checkout of the mjbatch repository."""
PINS = ("mjbatch==0.1.4", "mujoco==3.14.0")
"""What ``--setup`` installs into the bench venv (mjbatch 0.1.4's METADATA: ``Requires-Dist: mujoco==3.14.0``)."""
METRICS = ("physics_us", "rollout_us", "rollout_physics_us", "rollout_step_us", "samples_per_s")
"""Each child's timed numbers: us per world-substep of raw physics, of the rollout and of the physics inside the
rollout; us per world-control-step of the rollout; end-to-end samples/s."""
FASTER_IS_LOWER = {"physics_us": True, "rollout_us": True, "rollout_physics_us": True, "rollout_step_us": True,
                   "samples_per_s": False, "engine_us": True}
ENGINE = "engine"
"""The child (bench/mjbatch_engine.py) that steps the example's own model on mujoco 4.0's batch, against the
example's side stepping it on mjbatch (its ``engine`` command)."""
ENGINE_ROW = "the example's model on mujoco 4.0's batch"
"""The table's row of the engines alone."""
"""Whether a smaller value of the metric is the faster side (then the ratio is theirs / ours)."""
MARK = "SIDE_BY_SIDE_JSON "
"""The prefix of the one line of JSON a child prints."""
CHILD_TIMEOUT_S = 900
"""A child that runs longer is stopped (a stuck child must not hold the bench)."""


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--setup", action="store_true", help="create --venv and pip install mjbatch into it, then stop")
    p.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the bench's own venv (gitignored default)")
    p.add_argument("--mjbatch-src", type=Path, default=None, help="a checkout of the mjbatch repository")
    p.add_argument("--go1", type=Path, default=None,
                   help="the Go1 file for their example (default: $MENAGERIE_ROOT/unitree_go1/go1.xml)")
    p.add_argument("--tasks", default=None,
                   help="our tasks, comma-separated (default: quadruped-flat and menagerie:NAME of --go1's folder)")
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--physics-steps", type=int, default=20, help="control steps of the raw-physics timing")
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of the sides taking turns (each: raw physics, then one training iteration)")
    p.add_argument("--torch-threads", type=int, default=0,
                   help="torch threads of both sides (0: each side's own default; 1 on a busy machine, where a "
                        "2-thread update waits on cores that other jobs hold)")
    p.add_argument("--json", type=Path, default=None, help="also write every round's numbers to this file")
    args = p.parse_args(argv)
    for field, value in (("--num-envs", args.num_envs), ("--physics-steps", args.physics_steps),
                         ("--rounds", args.rounds)):
        if value < 1:
            raise UserError(f"{field} {value}: must be an integer >= 1")
    if args.torch_threads < 0:
        raise UserError(f"--torch-threads {args.torch_threads}: must be 0 (each side's default) or a count >= 1")
    return args


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def has_mjbatch(venv: Path) -> bool:
    """Whether ``venv`` has a python and mjbatch installed (read from its files: no process started)."""
    return venv_python(venv).exists() and any(venv.glob("lib/python3*/site-packages/mjbatch/__init__.py"))


def resolve_go1(go1: Path | None, environ: dict[str, str]) -> Path:
    """The file their example loads as ``unitree_go1``: ``--go1``, else Menagerie's under ``MENAGERIE_ROOT``."""
    if go1 is None:
        root = environ.get("MENAGERIE_ROOT")
        if root is None or not (Path(root) / "unitree_go1" / "go1.xml").is_file():
            raise UserError("--go1: no Go1 file given and no $MENAGERIE_ROOT/unitree_go1/go1.xml; pass --go1 PATH "
                            "(without Menagerie: `python -m tests.menagerie_models /tmp/menagerie` and "
                            "--go1 /tmp/menagerie/unitree_go2/go2.xml, the Go2-style test model)")
        go1 = Path(root) / "unitree_go1" / "go1.xml"
    if not go1.is_file():
        raise UserError(f"--go1 {go1}: no such file; pass a Menagerie-style Go1 (or Go2) file")
    return go1.resolve()


def check_inputs(args: argparse.Namespace, environ: dict[str, str]) -> Path:
    """One line for what is missing (venv, checkout, Go1 file) before any child starts; returns the Go1 file."""
    if not has_mjbatch(args.venv):
        raise UserError(f"--venv {args.venv}: no python with mjbatch there; create it with "
                        f"`python -m bench.mjbatch_side_by_side --setup --venv {args.venv}`")
    if args.mjbatch_src is None or not (args.mjbatch_src / EXAMPLE).is_file():
        raise UserError(f"--mjbatch-src {args.mjbatch_src}: no {EXAMPLE} there; pass a checkout of the "
                        "kevinzakka/mjbatch repository")
    return resolve_go1(args.go1, environ)


def our_tasks(tasks: str | None, go1: Path) -> list[str]:
    """``--tasks``, or the built-in quadruped and the same file as theirs by name (``menagerie:<its folder>``)."""
    if tasks is None:
        return ["quadruped-flat", f"menagerie:{go1.parent.name}"]
    names = [t.strip() for t in tasks.split(",") if t.strip()]
    if not names:
        raise UserError(f"--tasks {tasks!r}: expected task names separated by commas")
    return names


def setup_venv(venv: Path) -> None:
    """Create ``venv``, install ``PINS`` from the package registry, then append this venv's site-packages (torch)
    through a ``.pth`` file, written after the install so that pip never sees this venv's mujoco."""
    venv_module.create(venv, with_pip=True, clear=False)
    py = str(venv_python(venv))
    subprocess.run([py, "-m", "pip", "install", "--quiet", *PINS], check=True, timeout=1200)
    theirs = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True,
                            capture_output=True, text=True, timeout=60).stdout.strip()
    ours = site.getsitepackages()
    (Path(theirs) / "zz_legged_mjx_torch.pth").write_text("\n".join(ours) + "\n")
    print(f"{venv}: {', '.join(PINS)} installed; torch from {', '.join(ours)}")


def parse_reply(line: str) -> dict[str, Any] | None:
    """A child's answer: the JSON after ``MARK``; None for any other line it prints (warnings)."""
    if not line.startswith(MARK):
        return None
    reply: dict[str, Any] = json.loads(line[len(MARK):])
    return reply


class Child:
    """One side in its own process, built and warmed up on start, then answering commands one at a time (so that
    only one side runs at any moment)."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str]):
        self.name, self.cmd = name, cmd
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, bufsize=1)
        self.reply()  # built and warmed up

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            if not select.select([self.proc.stdout], [], [], CHILD_TIMEOUT_S)[0]:
                self.proc.kill()
                raise RuntimeError(f"{self.name}: no answer within {CHILD_TIMEOUT_S} s")
            line = self.proc.stdout.readline()
            if not line:
                self.stderr.seek(0)
                raise RuntimeError(f"{' '.join(self.cmd)} ended (exit {self.proc.wait()}):\n"
                                   f"{self.stderr.read()[-3000:]}")
            reply = parse_reply(line)
            if reply is not None:
                return reply

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.reply()

    def close(self) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.stderr.close()


def ratio(metric: str, ours: float, theirs: float) -> float:
    """Ours' speed over theirs' for ``metric`` (above 1: ours faster)."""
    return theirs / ours if FASTER_IS_LOWER[metric] else ours / theirs


def compare(metric: str, ours: list[float], theirs: list[float]) -> dict[str, float]:
    """Medians of both sides over the rounds, and the median, min and max of the per-round ratios (each ratio from
    numbers of the same round)."""
    ratios = [ratio(metric, a, b) for a, b in zip(ours, theirs, strict=True)]
    return {"ours": statistics.median(ours), "theirs": statistics.median(theirs), "ratio": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios)}


def summarize(rounds: list[dict[str, dict[str, Any]]], task: str) -> dict[str, dict[str, float]]:
    """Per metric of ``METRICS``: ``compare`` of our ``task`` against the example."""
    return {m: compare(m, [r[task][m] for r in rounds], [r["theirs"][m] for r in rounds]) for m in METRICS}


def summarize_engines(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """``compare`` of the engines alone: the example's model on mujoco 4.0's batch against mjbatch."""
    return {"engine_us": compare("engine_us", [r[ENGINE]["engine_us"] for r in rounds],
                                 [r["theirs"]["engine_us"] for r in rounds])}


LABELS = {"physics_us": "raw physics, us per world-substep", "rollout_us": "rollout, us per world-substep",
          "rollout_physics_us": "physics inside the rollout, us per world-substep",
          "rollout_step_us": "rollout, us per world-control-step",
          "samples_per_s": "end to end, samples/s",
          "engine_us": "the same model, settings and states (the example's), raw physics, us per world-substep"}


def format_table(summary: dict[str, dict[str, dict[str, float]]]) -> str:
    """A markdown table: one row per (our task, metric)."""
    rows = ["| ours | metric | ours | mjbatch example | ours / theirs (speed) | range over rounds |",
            "|---|---|---|---|---|---|"]
    for task, metrics in summary.items():
        for m, s in metrics.items():
            fmt = "{:,.0f}" if m == "samples_per_s" else "{:.2f}"
            rows.append(f"| {task} | {LABELS[m]} | {fmt.format(s['ours'])} | {fmt.format(s['theirs'])} | "
                        f"{s['ratio']:.2f}x | {s['ratio_min']:.2f}-{s['ratio_max']:.2f}x |")
    return "\n".join(rows)


def setup_line(setup: dict[str, Any]) -> str:
    """One line of a side's physics and threads, from its child's ``setup``."""
    line = (f"mujoco {setup.get('mujoco')}, {setup['substeps']} x {setup['timestep']} s, {setup['cone'].lower()} "
            f"cone, {setup['solver']} {setup['iterations']} it, {setup['integrator'].lower()}, "
            f"{setup['ngeom']} geoms, {setup['contacts']:.1f} contacts per world, physics threads "
            f"{setup['physics_threads'] or 'all'}")
    if setup.get("steps_per_env"):  # a training side
        line += f", {setup['steps_per_env']} steps per env, torch threads {setup['torch_threads']}"
    for key in ("symmetry", "adapted"):
        if setup.get(key):
            line += f", {key}: {setup[key] if isinstance(setup[key], str) else '; '.join(setup[key])}"
    return line


def commands(args: argparse.Namespace, go1: Path, tasks: list[str]) -> dict[str, list[str]]:
    """The child command of each side: ``theirs`` and one per our task."""
    common = ["--num-envs", str(args.num_envs), "--physics-steps", str(args.physics_steps),
              "--torch-threads", str(args.torch_threads)]
    out = {"theirs": [str(venv_python(args.venv)), "-P", str(ROOT / "bench" / "mjbatch_theirs.py"),
                      "--mjbatch-src", str(args.mjbatch_src.resolve()), "--go1", str(go1), *common]}
    for task in tasks:
        out[task] = [sys.executable, "-m", "bench.mjbatch_ours", "--task", task, *common]
    out[ENGINE] = [sys.executable, "-m", "bench.mjbatch_engine", "--mjbatch-src", str(args.mjbatch_src.resolve()),
                   "--go1", str(go1), "--num-envs", str(args.num_envs), "--physics-steps", str(args.physics_steps)]
    return out


def child_env(go1: Path, environ: dict[str, str]) -> dict[str, str]:
    """The children's environment: ``MENAGERIE_ROOT`` serves --go1's folder to our by-name task."""
    env = dict(environ)
    env.setdefault("MENAGERIE_ROOT", str(go1.parent.parent))
    return env


def round_jobs(names: list[str], k: int) -> list[tuple[str, str]]:
    """Round ``k``'s (child, command) pairs, run one at a time: the sides' raw physics, the two engines on the
    example's model, the sides' training iterations; each group's order reversed every other round."""
    sides = [n for n in names if n != ENGINE]
    groups = [[(n, "physics") for n in sides], [(ENGINE, "physics"), ("theirs", "engine")],
              [(n, "iteration") for n in sides]]
    return [job for group in groups for job in (group if k % 2 == 0 else group[::-1])]


def run_rounds(children: dict[str, Child], rounds: int) -> list[dict[str, dict[str, Any]]]:
    """``rounds`` rounds of ``round_jobs``; every answer kept under its child's name."""
    out = []
    for k in range(rounds):
        got: dict[str, dict[str, Any]] = {name: {} for name in children}
        for name, command in round_jobs(list(children), k):
            got[name].update(children[name].ask(command))
        for name, values in got.items():
            print(f"round {k + 1}/{rounds} {name}: " + ", ".join(f"{m} {v:.3g}" for m, v in values.items()),
                  flush=True)
        print(f"  load average {os.getloadavg()[0]:.1f}", flush=True)
        out.append(got)
    return out


def start_children(cmds: dict[str, list[str]], env: dict[str, str]) -> dict[str, Child]:
    """The sides, built one after the other (a build is not timed, but it must not overlap a timing)."""
    children: dict[str, Child] = {}
    try:
        for name, cmd in cmds.items():
            children[name] = Child(name, cmd, env)
    except BaseException:
        for child in children.values():
            child.close()
        raise
    return children


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    if args.setup:
        setup_venv(args.venv)
        return {}
    go1 = check_inputs(args, dict(os.environ))
    tasks = our_tasks(args.tasks, go1)
    env = child_env(go1, dict(os.environ))
    children = start_children(commands(args, go1, tasks), env)
    try:
        load_before = os.getloadavg()
        rounds = run_rounds(children, args.rounds)
        setups = {name: child.ask("setup") for name, child in children.items()}
    finally:
        for child in children.values():
            child.close()
    summary = {task: summarize(rounds, task) for task in tasks} | {ENGINE_ROW: summarize_engines(rounds)}
    result = {"go1": str(go1), "num_envs": args.num_envs, "rounds": rounds, "summary": summary,
              "load_before": load_before, "load_after": os.getloadavg(), "setups": setups}
    print(f"\nthe same {args.num_envs} worlds per side, {args.rounds} rounds; load average {load_before[0]:.1f} "
          f"before, {result['load_after'][0]:.1f} after; their model: {go1}")
    for name, setup in result["setups"].items():
        print(f"  {name}: {setup_line(setup)}")
    print(format_table(summary))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    from contract.errors import run_reporting_errors

    sys.exit(run_reporting_errors(lambda: (main(), 0)[1], debug=False))
