"""Robots by name (issue 37, item 5): ``--task menagerie:NAME[@ENTRY][:flat|:rough]`` through the
``mujoco-menagerie`` package, served from a ``MENAGERIE_ROOT`` folder the tests write (tests/menagerie_models.py):
the drafted spec with the check's ``--fix`` settings (cached), a reviewed spec's precedence, entry points, the
one-line errors, and (slow) training, play.py, ONNX export and sim2sim from the ONNX file alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import configs.menagerie as menagerie_config
from configs.catalog import get_task
from contract.errors import UserError
from envs.robot_check.verdict import robot_of
from envs.robots.draft import draft
from tests.menagerie_models import menagerie_root, seed_fix_cache

pytest.importorskip("mujoco_menagerie")
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def served(tmp_path, monkeypatch):
    """MENAGERIE_ROOT at a folder of the test models, the fix cache in tmp_path, no Menagerie task resolved yet."""
    from envs import registry

    for name in [n for n in registry.registered_so_far() if n.startswith("menagerie:")]:
        monkeypatch.delitem(registry._REGISTRY, name)
    root = menagerie_root(tmp_path / "menagerie")
    monkeypatch.setenv("MENAGERIE_ROOT", str(root))
    monkeypatch.setenv("LEGGED_MJX_CACHE", str(tmp_path / "cache"))
    return root


def _seed(task: str) -> Path:
    """A cache entry saying the search kept the draft as it is (so the plumbing is tested without the search)."""
    return seed_fix_cache(task)


def test_a_robot_by_name_is_the_draft_with_the_cached_fix_settings(served, capsys):
    cached = _seed("menagerie:unitree_go2")
    task = get_task("menagerie:unitree_go2")
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("menagerie:unitree_go2: no reviewed spec in this repo: the spec drafted from "
                           f"{served / 'unitree_go2' / 'go2.xml'}"), line
    assert f"with the robot check's --fix settings (cached in {cached})" in line, line
    assert task.name == "menagerie:unitree_go2" and get_task("menagerie:unitree_go2") is task  # registered
    robot = robot_of(task)
    assert robot.foot_names == ("FL", "FR", "RL", "RR") and robot.num_joints == 12
    assert task.default_config().algorithm.symmetry == "augment"  # twins from the FL/FR/RL/RR names
    rough = get_task("menagerie:unitree_go2:rough")
    assert rough.default_config().env.terrain.type == "generated"


def test_the_checks_physics_step_is_said_and_run_as_the_tasks_decimation(served, capsys):
    cached = _seed("menagerie:anybotics_anymal_c")
    saved = json.loads(cached.read_text())
    saved["sim"].update(timestep=0.01, substeps=2)
    cached.write_text(json.dumps(saved))
    task = get_task("menagerie:anybotics_anymal_c")
    assert capsys.readouterr().out.splitlines()[1] == (
        "menagerie:anybotics_anymal_c: physics steps of 0.01 s, 2 per control step (the robot check passes there: "
        'docs/robots.md, "The physics step")')
    assert task.default_config().env.decimation == 2 and robot_of(task).model.opt.timestep == 0.01


def test_another_entry_point_and_its_errors(served, capsys):
    _seed("menagerie:unitree_go2@go2_mjx")
    task = get_task("menagerie:unitree_go2@go2_mjx:flat")
    assert str(served / "unitree_go2" / "go2_mjx.xml") in capsys.readouterr().out
    assert robot_of(task).spec.name == "unitree_go2_go2_mjx"
    for name, words in (("menagerie:unitree_go2@scene", "is a scene (its own floor and lights); the task builds "
                                                        "the scene: use a robot entry: go2, go2_mjx"),
                        ("menagerie:unitree_go2@go3", "no such entry point; its robot entries: go2, go2_mjx"),
                        ("menagerie:unitree_go2:hilly", "'hilly' is not a task of a Menagerie robot; allowed: flat, "
                                                        "rough")):
        with pytest.raises(UserError, match=None) as e:
            get_task(name)
        assert words in str(e.value) and len(str(e.value).splitlines()) == 1, e.value


def test_fast_is_the_cheaper_contact_model_said_and_cached_apart(served, capsys):
    import mujoco

    cached, file_cached = _seed("menagerie:unitree_go2+fast"), _seed("menagerie:unitree_go2")
    assert cached.name.startswith("unitree_go2+fast-") and cached != file_cached
    task = get_task("menagerie:unitree_go2+fast:deploy")
    out = capsys.readouterr().out.splitlines()
    assert f"with the robot check's --fix settings (cached in {cached})" in out[0], out[0]
    assert out[1] == ("menagerie:unitree_go2+fast:deploy: +fast: a pyramidal cone at impratio 1 and feet of condim 3 "
                      "(MuJoCo Playground's and mjlab's contact model), not the file's; rehearse the policy on the "
                      "file's own with python -m deploy.rehearse POLICY --model "
                      f"{served / 'unitree_go2' / 'go2.xml'}"), out[1]
    m = robot_of(task).model
    feet = {g for foot in robot_of(task).foot_geom_ids for g in foot}
    assert m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and m.opt.impratio == 1.0
    assert {int(m.geom_condim[g]) for g in feet} == {3}
    plain = robot_of(get_task("menagerie:unitree_go2")).model  # the file's: elliptic, impratio 100, condim 6
    assert capsys.readouterr().out.splitlines()[1] == (
        "menagerie:unitree_go2: the file's elliptic friction cone is most of its physics cost on a CPU; "
        "menagerie:unitree_go2+fast trains on MuJoCo Playground's and mjlab's cheaper contact model (docs/robots.md)")
    _seed("menagerie:unitree_h1")
    get_task("menagerie:unitree_h1")  # a pyramidal cone (MuJoCo's default): no hint
    assert "+fast" not in capsys.readouterr().out
    assert plain.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and plain.opt.impratio == 100.0
    assert {int(plain.geom_condim[g]) for g in feet} == {6}
    with pytest.raises(UserError) as e:
        get_task("menagerie:unitree_go2+quick")
    assert str(e.value) == ("--task menagerie:unitree_go2+quick: 'quick' after '+' is not allowed; allowed: fast "
                            "(menagerie:unitree_go2+fast trains on MuJoCo Playground's and mjlab's cheaper contact "
                            "model)")


def test_one_line_errors(served, monkeypatch, tmp_path):
    with pytest.raises(UserError) as e:
        get_task("menagerie:unitree_go3")
    assert "no robot named 'unitree_go3'; did you mean unitree_go2" in str(e.value), e.value
    with pytest.raises(UserError) as e:
        get_task("menagerie:franka_emika_panda")
    assert "is a robot of category 'arm'" in str(e.value) and "quadruped, humanoid, biped" in str(e.value)
    monkeypatch.delenv("MENAGERIE_ROOT")  # nothing cached, and no network: the download fails at once
    monkeypatch.setenv("MENAGERIE_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("MENAGERIE_BASE_URL", (tmp_path / "no-network").as_uri())
    with pytest.raises(UserError) as e:
        get_task("menagerie:anybotics_anymal_c")
    assert "not in the package's cache and it could not be downloaded" in str(e.value)
    assert "set MENAGERIE_ROOT=/dir to a Menagerie checkout (/dir/anybotics_anymal_c/anymal_c.xml)" in str(e.value)
    monkeypatch.setitem(sys.modules, "mujoco_menagerie", None)  # the package missing
    with pytest.raises(UserError, match=r"need the mujoco-menagerie package: pip install -e '\.\[menagerie\]'"):
        get_task("menagerie:unitree_h1")


def test_a_reviewed_spec_in_the_repo_takes_precedence(served, monkeypatch, tmp_path, capsys):
    reviewed = tmp_path / "reviewed"
    reviewed.mkdir()
    (reviewed / "unitree_go2.py").write_text(
        "import dataclasses, importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('go_like', {str(ROOT / 'examples/go_like/go_like.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"
        "from configs.locomotion import flat_task\nfrom envs.robots.menagerie import menagerie_xml\n"
        "flat = flat_task('reviewed', dataclasses.replace(module.GO_LIKE, name='reviewed_go2', "
        "mjcf=menagerie_xml('unitree_go2')))\n")
    monkeypatch.setattr(menagerie_config, "REVIEWED", reviewed)
    task = get_task("menagerie:unitree_go2")
    assert capsys.readouterr().out.startswith(f"menagerie:unitree_go2: the reviewed spec {reviewed / 'unitree_go2.py'}")
    assert task.name == "menagerie:unitree_go2" and robot_of(task).spec.name == "reviewed_go2"


def test_new_robot_drafts_a_menagerie_robot_by_name(served, tmp_path):
    out = tmp_path / "anymal_c.py"
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "tools.new_robot", "menagerie:anybotics_anymal_c", "--out",
                             str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert 'mjcf=menagerie_xml("anybotics_anymal_c"),' in text
    assert 'FootGeom(body=".*_SHANK", geom_class="foot")' in text
    spec = robot_of(get_task(f"{out}:flat")).spec
    assert spec == draft(served / "anybotics_anymal_c" / "anymal_c.xml", "anybotics_anymal_c").spec


def test_new_robot_and_check_robot_with_fast_keep_the_cheaper_contact_model(served, tmp_path):
    out = tmp_path / "go2_fast.py"
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    made = subprocess.run([sys.executable, "-m", "tools.new_robot", "menagerie:unitree_go2+fast", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert made.returncode == 0, made.stderr
    assert 'sim=SimOverrides(cone="pyramidal", impratio=1.0, foot_condim=3' in out.read_text()
    assert made.stdout.rstrip().endswith(f"next: python -m tools.check_robot {out}:flat --fix --fast --write")
    checked = subprocess.run([sys.executable, "-m", "tools.check_robot", f"{out}:flat", "--fix", "--fast",
                              "--rollouts", "128"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "fix: solver: solver 20 / 20, pyramidal cone, impratio 1 (the cheapest that passes the check)" in \
        checked.stdout, checked.stdout
    assert "contact settings: the robot file's" not in checked.stdout


@pytest.mark.slow
def test_train_play_export_and_sim2sim_of_a_robot_by_name(served, tmp_path, capsys):
    """No spec file: the draft and a real --fix search (the ANYbotics-style model: undamped file servos, unnamed
    multi-geom feet, soft feet); train.py, play.py (evaluation, ONNX export) and sim2sim from the ONNX file with
    the robot's folder gone (the scene travels in the file's metadata)."""
    import shutil

    import play
    import train
    from deploy.onnx_policy import OnnxPolicy

    run, onnx_file = tmp_path / "run", tmp_path / "policy.onnx"
    assert train.main(["--task", "menagerie:anybotics_anymal_c", "--seed", "1", "--num-envs", "64",
                       "--max-iterations", "2", "--run-dir", str(run), "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "--fix settings (searched in" in first and "verdict OK" in first, first
    assert play.main(["--checkpoint", str(run), "--episodes", "2", "--export-onnx", str(onnx_file)]) == 0
    meta = OnnxPolicy(onnx_file).metadata
    assert meta["task"] == "menagerie:anybotics_anymal_c" and "scene_mjb" in meta
    (cached,) = menagerie_config.cache_dir().glob("anybotics_anymal_c-*.json")  # what a new process reads
    assert json.loads(cached.read_text())["verdict"] == "OK"
    shutil.rmtree(served)
    assert play.main(["--sim2sim", str(onnx_file), "--episodes", "1"]) == 0
