"""bench.mjbatch_side_by_side's pure parts, without installing anything: arguments, the one-line errors for a
missing venv / checkout / Go1 file, the ratios (per round, ours' speed over theirs'), the children's commands and
output, and the Go1 names bench.mjbatch_theirs adds to a Go2-style file. The real run is the documented command in
docs/benchmarks.md (section "Side by side with mjbatch")."""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import pytest

from bench import mjbatch_side_by_side as sbs
from bench.mjbatch_theirs import MARK as theirs_mark
from bench.mjbatch_theirs import adapt
from contract.errors import UserError

ROOT = Path(__file__).resolve().parents[2]


def fake_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / "lib" / "python3.11" / "site-packages" / "mjbatch").mkdir(parents=True)
    (venv / "lib" / "python3.11" / "site-packages" / "mjbatch" / "__init__.py").write_text("")
    return venv


def fake_checkout(tmp_path: Path) -> Path:
    src = tmp_path / "mjbatch"
    (src / "examples").mkdir(parents=True)
    (src / "examples" / "go1_joystick.py").write_text("")
    return src


def test_defaults_and_bad_counts():
    args = sbs.parse([])
    assert (args.num_envs, args.rounds, args.torch_threads, args.venv) == (1024, 5, 0, sbs.DEFAULT_VENV)
    with pytest.raises(UserError, match=r"^--rounds 0: must be an integer >= 1$"):
        sbs.parse(["--rounds", "0"])
    with pytest.raises(UserError, match=r"^--torch-threads -1: must be 0 \(each side's default\) or a count >= 1$"):
        sbs.parse(["--torch-threads", "-1"])


def test_missing_venv_is_one_line_naming_the_setup_command(tmp_path):
    args = sbs.parse(["--venv", str(tmp_path / "nope"), "--mjbatch-src", str(fake_checkout(tmp_path))])
    with pytest.raises(UserError, match=r"^--venv .*nope: no python with mjbatch there; create it with "
                                        r"`python -m bench.mjbatch_side_by_side --setup") as e:
        sbs.check_inputs(args, {})
    assert "\n" not in str(e.value)
    (tmp_path / "bare" / "bin").mkdir(parents=True)  # a venv without mjbatch is just as missing
    (tmp_path / "bare" / "bin" / "python").write_text("")
    assert not sbs.has_mjbatch(tmp_path / "bare") and sbs.has_mjbatch(fake_venv(tmp_path))


def test_missing_checkout_and_go1_are_one_line_each(tmp_path):
    venv = fake_venv(tmp_path)
    args = sbs.parse(["--venv", str(venv), "--mjbatch-src", str(tmp_path / "elsewhere")])
    with pytest.raises(UserError, match=r"^--mjbatch-src .*elsewhere: no examples/go1_joystick.py there; pass a "
                                        r"checkout of the kevinzakka/mjbatch repository$"):
        sbs.check_inputs(args, {})
    args = sbs.parse(["--venv", str(venv), "--mjbatch-src", str(fake_checkout(tmp_path))])
    with pytest.raises(UserError, match=r"^--go1: no Go1 file given and no \$MENAGERIE_ROOT/unitree_go1/go1.xml"):
        sbs.check_inputs(args, {"MENAGERIE_ROOT": str(tmp_path)})
    (tmp_path / "unitree_go1").mkdir()
    (tmp_path / "unitree_go1" / "go1.xml").write_text("<mujoco/>")
    assert sbs.check_inputs(args, {"MENAGERIE_ROOT": str(tmp_path)}) == (tmp_path / "unitree_go1" / "go1.xml")
    args.go1 = tmp_path / "missing.xml"
    with pytest.raises(UserError, match=r"^--go1 .*missing.xml: no such file"):
        sbs.check_inputs(args, {})


def test_our_tasks_default_to_the_builtin_quadruped_and_the_same_file_by_name(tmp_path):
    go2 = tmp_path / "unitree_go2" / "go2.xml"
    assert sbs.our_tasks(None, go2) == ["quadruped-flat", "menagerie:unitree_go2"]
    assert sbs.our_tasks(" quadruped-rough ,", go2) == ["quadruped-rough"]
    with pytest.raises(UserError, match="--tasks ' , ': expected task names"):
        sbs.our_tasks(" , ", go2)
    assert sbs.child_env(go2, {})["MENAGERIE_ROOT"] == str(tmp_path)
    assert sbs.child_env(go2, {"MENAGERIE_ROOT": "/given"})["MENAGERIE_ROOT"] == "/given"


def test_ratios_are_ours_speed_over_theirs_per_round():
    assert sbs.ratio("rollout_us", 2.0, 3.0) == pytest.approx(1.5)  # ours takes 2 us, theirs 3: ours 1.5x
    assert sbs.ratio("samples_per_s", 2.0, 4.0) == pytest.approx(0.5)
    same = {"rollout_physics_us": 1.0, "rollout_step_us": 1.0}
    rounds = [{"t": {"physics_us": 1.0, "rollout_us": 4.0, "samples_per_s": 10.0, **same},
               "theirs": {"physics_us": 2.0, "rollout_us": 2.0, "samples_per_s": 5.0, **same}},
              {"t": {"physics_us": 3.0, "rollout_us": 2.0, "samples_per_s": 30.0, **same},
               "theirs": {"physics_us": 3.0, "rollout_us": 1.0, "samples_per_s": 60.0, **same}}]
    s = sbs.summarize(rounds, "t")
    # the median of each round's ratio (2.0 and 1.0), not the ratio of the medians (2.5 / 2.0 = 1.25)
    assert s["physics_us"] == {"ours": 2.0, "theirs": 2.5, "ratio": 1.5, "ratio_min": 1.0, "ratio_max": 2.0}
    assert s["rollout_us"]["ratio"] == pytest.approx(0.5)
    assert s["samples_per_s"]["ratio"] == pytest.approx(1.25)
    table = sbs.format_table({"t": s})
    assert "| t | end to end, samples/s | 20 | 32 | 1.25x | 0.50-2.00x |" in table


def test_a_round_runs_every_side_and_both_engines_the_order_flipped_every_other_round():
    names = ["theirs", "quadruped-flat", sbs.ENGINE]
    first = sbs.round_jobs(names, 0)
    assert first == [("theirs", "physics"), ("quadruped-flat", "physics"), (sbs.ENGINE, "physics"),
                     ("theirs", "engine"), ("theirs", "iteration"), ("quadruped-flat", "iteration")]
    assert sbs.round_jobs(names, 1) == [first[1], first[0], first[3], first[2], first[5], first[4]]
    rounds = [{sbs.ENGINE: {"engine_us": 10.0}, "theirs": {"engine_us": 20.0}},
              {sbs.ENGINE: {"engine_us": 30.0}, "theirs": {"engine_us": 30.0}}]
    assert sbs.summarize_engines(rounds)["engine_us"] == {"ours": 20.0, "theirs": 25.0, "ratio": 1.5,
                                                           "ratio_min": 1.0, "ratio_max": 2.0}


def test_children_commands_and_their_one_json_line(tmp_path):
    args = sbs.parse(["--venv", str(tmp_path / "v"), "--mjbatch-src", str(tmp_path), "--num-envs", "8"])
    cmds = sbs.commands(args, tmp_path / "go1.xml", ["quadruped-flat"])
    assert cmds["theirs"][:3] == [str(tmp_path / "v" / "bin" / "python"), "-P",
                                  str(ROOT / "bench" / "mjbatch_theirs.py")]
    assert cmds["quadruped-flat"][:5] == [sys.executable, "-m", "bench.mjbatch_ours", "--task", "quadruped-flat"]
    assert cmds[sbs.ENGINE][:3] == [sys.executable, "-m", "bench.mjbatch_engine"]
    for cmd in cmds.values():  # every child gets the same sizes
        assert cmd[cmd.index("--num-envs") + 1] == "8"
    assert cmds["theirs"][cmds["theirs"].index("--torch-threads") + 1] == "0"
    assert cmds["quadruped-flat"][cmds["quadruped-flat"].index("--torch-threads") + 1] == "0"
    assert sbs.parse_reply(sbs.MARK + '{"physics_us": 1.5}\n') == {"physics_us": 1.5}
    assert sbs.parse_reply("UserWarning: Attach conflict\n") is None
    assert sbs.MARK == theirs_mark  # the children answer with the mark the bench reads


def test_a_child_that_dies_is_reported_with_its_stderr(tmp_path):
    cmd = [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(RuntimeError, match=r"ended \(exit 3\):\nboom"):
        sbs.Child("broken", cmd, {})


def test_a_go2_style_file_gets_the_go1_names_the_example_reads():
    spec = mujoco.MjSpec.from_file(str(ROOT / "examples" / "go_like" / "go_like.xml"))
    adapted: list[str] = []
    adapt(spec, adapted)
    model = spec.compile()
    assert model.body("trunk").id == 1 and model.site("imu").bodyid == 1
    assert [model.site(f).bodyid for f in ("FR", "FL", "RR", "RL")] == [model.geom(f).bodyid[0]
                                                                        for f in ("FR", "FL", "RR", "RL")]
    assert model.light("spotlight") is not None and len(adapted) == 4
    again: list[str] = []
    adapt(spec, again)  # a file that has the names is left as it is
    assert again == []
