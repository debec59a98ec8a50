"""Files a contributor edits outside a new task family to add it (issue 49: its folder, config and deploy module only).

    python -m tools.experiments.family_edits [--quick] [--keep DIR] [--undeclared]

Copies the project (git's tracked and untracked, not ignored, files as the working tree has them) to a temporary
folder and adds a toy family there, ``toyreach``: a renamed copy of ``reach`` in exactly three places, its folder
``envs/tasks/toyreach/``, its config ``configs/toyreach.py`` (task ``toy-reach``) and its sim2sim module
``deploy/sim2sim_toyreach.py`` (the family's ``FAMILY = Family(...)`` declaration). No other file is written
(checked: every other file's bytes as copied). Then it checks that the family works there:

    found      contract.schema.FAMILIES names ``toyreach`` (module deploy.sim2sim_toyreach); the catalog registers
               ``toy-reach``; the house tests that name every module and every import pass (package maps, layering)
    trained    (not with --quick) train.py --task toy-reach --max-iterations 1 --num-envs 16
    exported   play.py --export-onnx: the file says ``task_family: toyreach`` and matches the schema (no problems)
    sim2sim    play.py --sim2sim on that file: plain MuJoCo, finite metrics

Prints one JSON object: ``edits_elsewhere`` (files outside the three places that differ from the original: 0),
each check's result, ``docs_regenerated`` (generated docs tables that the family's keys change, which a contributor
rewrites with the command named: not a hand edit) and the seconds taken. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FAMILY, TASK = "toyreach", "toy-reach"
"""The toy family and its task."""
PLACES = (f"envs/tasks/{FAMILY}/", f"configs/{FAMILY}.py", f"deploy/sim2sim_{FAMILY}.py")
"""Where a family lives: the only paths the toy writes."""
HOUSE_TESTS = ("tests/house/test_package_maps.py", "tests/house/test_layering.py")
"""House tests that every new module or import must satisfy."""
TIMEOUT_S = 600
"""Per child command."""


def copy_project(dest: Path) -> None:
    """The working tree's tracked and untracked-not-ignored files, as they are now (outside a git checkout, e.g.
    an older commit unpacked with ``git archive``: every file but caches and runs)."""
    git = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True)
    listed = (git.stdout.decode().split("\0") if git.returncode == 0 and git.stdout else
              [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
               if not {"__pycache__", "runs", ".venv"} & set(p.parts)])
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def digests(root: Path) -> dict[str, str]:
    """Every file's sha256 by relative path (caches and run outputs aside)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.parts[len(root.parts)] not in ("runs", "out")}


def renamed(text: str) -> str:
    """reach's text as the toy family's: its package, task name and family name."""
    return (text.replace("envs.tasks.reach", f"envs.tasks.{FAMILY}").replace('"arm-reach"', f'"{TASK}"')
            .replace('"task_family": "reach"', f'"task_family": "{FAMILY}"')
            .replace('FAMILY = Family(\n    "reach",', f'FAMILY = Family(\n    "{FAMILY}",'))


def add_toy_family(root: Path, declare: bool = True) -> None:
    """The toy family in its three places (``declare=False``: its sim2sim module without its declaration, the
    family a contributor would have to register elsewhere)."""
    shutil.copytree(root / "envs/tasks/reach", root / PLACES[0], ignore=shutil.ignore_patterns("__pycache__"))
    for path in (root / PLACES[0]).glob("*.py"):
        path.write_text(renamed(path.read_text()))
    (root / PLACES[1]).write_text(renamed((root / "configs/reach.py").read_text()))
    deploy = renamed((root / "deploy/sim2sim_reach.py").read_text())
    if not declare:
        deploy = deploy.replace("\nFAMILY = Family(", "\n_UNDECLARED = Family(")
    (root / PLACES[2]).write_text(deploy)


def run(cmd: list[str], cwd: Path) -> tuple[bool, str]:
    """A child command in the copy (its modules first on the path, one thread): ok, its output's last lines."""
    env = {**os.environ, "PYTHONPATH": str(cwd), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {TIMEOUT_S} s"
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-6:])
    return done.returncode == 0, tail


FOUND = ("import json, sys\nfrom contract import schema\nfrom configs.catalog import registered\n"
         "fam = schema.FAMILIES.get(sys.argv[1])\n"
         "print(json.dumps({'module': fam and fam.sim2sim, 'task': sys.argv[2] in registered(), "
         "'docs_deploy_md': schema.markdown() in open('docs/deploy.md').read()}))")
"""Run in the copy: the family's declared module, its task registered, docs/deploy.md's table still verbatim."""
EXPORTED = ("import json, sys\nfrom contract import schema\nfrom deploy.onnx_policy import OnnxPolicy\n"
            "meta = OnnxPolicy(sys.argv[1]).metadata\n"
            "print(json.dumps({'task_family': schema.family(meta), 'problems': schema.problems(meta)}))")
"""Run in the copy: the exported file's family and its schema problems."""


def check_found(root: Path) -> dict[str, Any]:
    """The family discovered, its task registered, the house tests passing."""
    ok, out = run([sys.executable, "-c", FOUND, FAMILY, TASK], root)
    found = json.loads(out.splitlines()[-1]) if ok else {"error": out}
    house_ok, house = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *HOUSE_TESTS], root)
    return {**found, "house_tests": house_ok, **({} if house_ok else {"house_output": house}),
            "ok": ok and found.get("module") == f"deploy.sim2sim_{FAMILY}" and found.get("task") is True
            and house_ok}


def check_pipeline(root: Path) -> dict[str, Any]:
    """Train one iteration, export, check the file, play it in sim2sim."""
    run_dir, onnx, metrics = root / "runs" / TASK, root / "out" / f"{TASK}.onnx", root / "out" / "sim2sim.json"
    onnx.parent.mkdir(exist_ok=True)
    steps = {
        "trained": [sys.executable, "train.py", "--task", TASK, "--max-iterations", "1", "--num-envs", "16",
                    "--run-dir", str(run_dir), "--quiet"],
        "exported": [sys.executable, "play.py", "--checkpoint", str(run_dir), "--episodes", "0",
                     "--export-onnx", str(onnx)],
        "sim2sim": [sys.executable, "play.py", "--sim2sim", str(onnx), "--episodes", "2", "--json", str(metrics)],
    }
    out: dict[str, Any] = {}
    for name, cmd in steps.items():
        ok, tail = run(cmd, root)
        out[name] = {"ok": ok, **({} if ok else {"output": tail})}
        if not ok:
            return out
    ok, tail = run([sys.executable, "-c", EXPORTED, str(onnx)], root)
    meta = json.loads(tail.splitlines()[-1]) if ok else {"error": tail}
    out["exported"] = {**meta, "ok": meta.get("task_family") == FAMILY and meta.get("problems") == []}
    out["sim2sim"]["metrics"] = json.loads(metrics.read_text())
    return out


def measure(root: Path, quick: bool = False, declare: bool = True) -> dict[str, Any]:
    """Copy the project into ``root``, add the toy family, run the checks."""
    start = time.perf_counter()
    copy_project(root)
    before = digests(root)
    add_toy_family(root, declare)
    after = digests(root)
    elsewhere = sorted(p for p in set(before) | set(after)
                       if before.get(p) != after.get(p) and not p.startswith(PLACES))
    result: dict[str, Any] = {"family": FAMILY, "places": list(PLACES), "edits_elsewhere": len(elsewhere),
                              "edited": elsewhere, "found": check_found(root)}
    if not quick and result["found"]["ok"]:
        result.update(check_pipeline(root))
    checks = [v["ok"] for v in result.values() if isinstance(v, dict) and "ok" in v]
    result["ok"] = not elsewhere and all(checks) and (quick or len(checks) == 4)
    result["docs_regenerated"] = ([] if result["found"].get("docs_deploy_md")
                                  else ["docs/deploy.md (python -m contract.schema)"])
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="discovery and house tests only (no training)")
    p.add_argument("--keep", type=Path, help="build the copy in this (new) folder and keep it")
    p.add_argument("--undeclared", action="store_true",
                   help="leave out the family's FAMILY declaration (the checks then fail: they can)")
    args = p.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        result = measure(args.keep, args.quick, not args.undeclared)
    else:
        with tempfile.TemporaryDirectory(prefix="family_edits_") as tmp:
            result = measure(Path(tmp), args.quick, not args.undeclared)
    print(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
