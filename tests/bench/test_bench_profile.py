"""bench.profile: the split of a control step adds up to the measured total, the physics' size is read, and the
collision pairs it counts from the model are the ones MuJoCo's collision stage tests."""

from __future__ import annotations

import json

import mujoco
import pytest

from bench.collision_pairs import checked_pairs, count_by_kind, without_skippable
from bench.profile import PARTS, main
from bench.profile_report import table_row
from contract.errors import UserError

CHAIN = """
<mujoco>
  <asset><mesh name="tet" vertex="0 0 -0.05  0.05 0 0  0 0.05 0  0 0 0.05"/></asset>
  {option}
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="a">
      <freejoint/>
      <geom name="ga" type="sphere" size="0.1"/>
      <body name="b">
        <joint type="hinge"/>
        <geom name="gb" type="sphere" size="0.1"/>
        <body name="c">
          <joint type="hinge"/>
          <geom name="gc" type="sphere" size="0.1"/>
          <geom name="gc_visual" type="mesh" mesh="tet" group="2"/>
          <geom type="sphere" size="0.05" group="2" contype="0" conaffinity="0"/>
          <geom type="sphere" size="0.05" group="2" contype="0" conaffinity="0"/>
        </body>
      </body>
      <body name="d">
        <joint type="hinge"/>
        <geom name="gd" type="sphere" size="0.1" contype="2" conaffinity="2"/>
      </body>
    </body>
  </worldbody>
  {contact}
</mujoco>
"""
"""Every geom overlaps every other at the origin: the geom pairs in contact after mj_forward are the checked ones."""


def _chain(option: str = "", contact: str = "") -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(CHAIN.format(option=option, contact=contact))


def _in_contact(m: mujoco.MjModel) -> set[tuple[int, int]]:
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return {(min(c.geom), max(c.geom)) for c in d.contact[:d.ncon]}


@pytest.mark.parametrize(("option", "contact", "expected"), [
    ("", "", {"world": 3, "visual": 2, "self": 1, "parent_child": 0}),
    ('<option><flag filterparent="disable"/></option>', "", {"world": 3, "visual": 3, "self": 1, "parent_child": 2}),
    ("", '<contact><exclude body1="a" body2="c"/></contact>', {"world": 3, "visual": 1, "self": 0,
                                                               "parent_child": 0}),
])
def test_checked_pairs_are_those_mujoco_collides(option: str, contact: str, expected: dict[str, int]) -> None:
    m = _chain(option, contact)
    pairs = checked_pairs(m)
    assert {p.ids for p in pairs} == _in_contact(m)
    counts = count_by_kind(pairs)
    assert {k: counts[k] for k in expected} == expected


def test_without_skippable_keeps_the_world_pairs_only() -> None:
    m = _chain('<option><flag filterparent="disable"/></option>')
    world = {p.ids for p in checked_pairs(m) if p.kind == "world"}
    lean = without_skippable(m)
    assert {p.ids for p in checked_pairs(lean)} == world == _in_contact(lean)
    assert (m.geom_contype != 0).sum() > 0  # the original model is left as it was
    assert {p.ids for p in checked_pairs(m)} == _in_contact(m)


def test_profile_splits_a_control_step_and_reads_the_physics(tmp_path) -> None:
    out = tmp_path / "profile.json"
    r = main(["--task", "quadruped-flat", "--num-envs", "16", "--iterations", "2", "--warmup", "0",
              "--json", str(out), "runner.torch_threads=1", "env.physics_threads=1"])
    ms = r["ms_per_control_step"]
    assert r["control_steps"] == 2 * r["steps_per_env"]
    assert all(ms[k] > 0 for k in PARTS), ms
    assert abs(r["sum_of_parts_ms"] - ms["total"]) <= 0.05 * ms["total"], ms
    p = r["physics"]
    assert p["substeps"] >= 1 and p["mean_contacts"] > 0 and p["mean_constraint_rows"] >= p["mean_contacts"]
    assert p["mean_equality_rows"] + p["mean_friction_rows"] + p["mean_limit_rows"] < p["mean_constraint_rows"]
    assert r["collision_pairs"]["checked"] > 0 and r["collision_pairs"]["counts"]["world"] > 0
    assert any(q["touched"] for q in r["collision_pairs"]["list"])  # the feet stand on the floor
    assert r["samples_per_s"] > 0
    assert json.loads(out.read_text())["ms_per_control_step"] == ms
    row = table_row(r)  # docs/benchmarks.md's row: 13 columns
    assert row.count("|") == 14 and f"| {r['collision_pairs']['checked']} (" in row, row


def test_bad_iterations_is_one_line() -> None:
    with pytest.raises(UserError, match="--iterations 0"):
        main(["--task", "quadruped-flat", "--iterations", "0"])


def test_skip_experiment_times_both_models_from_the_same_states() -> None:
    from types import SimpleNamespace

    from bench.profile import skip_experiment
    from envs.physics.native import NativePhysics

    m = _chain()
    env = SimpleNamespace(model=m, num_envs=4, physics=NativePhysics(m, 4, 2, nthread=1),
                          cfg=SimpleNamespace(physics_threads=1))
    s = skip_experiment(env, steps=2, repeats=2)
    assert s["as_is_ms"] > 0 and s["skipped_ms"] > 0 and s["ratio_min"] <= s["ratio"] <= s["ratio_max"]
    assert 0 < s["contacts_skipped"] < s["contacts_as_is"]  # the self and visual contacts are gone, the floor's kept


def test_end_to_end_bench_runs_an_iteration() -> None:
    """bench.end_to_end drives the runner's collection and the algorithm's update directly: a change of either's
    signature must fail here, not in the next benchmark session."""
    from bench.end_to_end import main as end_to_end

    result = end_to_end(["--task", "quadruped-flat", "--num-envs", "16", "--iterations", "1", "--warmup", "0"])
    assert result["samples_per_s"] > 0 and 0 < result["learning_share"] < 1 and result["physics_share"] > 0
