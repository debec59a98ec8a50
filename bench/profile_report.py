"""The printed table of ``bench.profile`` (its result dict in, text out)."""

from __future__ import annotations

from typing import Any

LABELS = {
    "physics": "physics ({substeps} MuJoCo substeps)",
    "task_logic": "task logic (obs, rewards, terminations, resets)",
    "policy_inference": "policy inference",
    "rollout_bookkeeping": "rollout bookkeeping (storage, GAE)",
    "learning": "learning (PPO update, per control step)",
}
"""Row labels of the parts, in the table's order."""


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def _time_table(r: dict[str, Any]) -> list[str]:
    ms, total = r["ms_per_control_step"], r["ms_per_control_step"]["total"]
    substeps = r["physics"]["substeps"] if r["physics"] else "no"
    lines = ["| part | ms per control step | share of total |", "|---|---|---|"]
    for key, label in LABELS.items():
        lines.append(f"| {label.format(substeps=substeps)} | {ms[key]:.3f} | {ms[key] / total:.1%} |")
    lines.append(f"| sum of the parts | {r['sum_of_parts_ms']:.3f} | {r['sum_of_parts_ms'] / total:.1%} |")
    lines.append(f"| measured total | {total:.3f} | 100.0% |")
    return lines


def _physics_lines(r: dict[str, Any]) -> list[str]:
    p = r["physics"]
    if p is None:
        return ["physics: the env has no MuJoCo backend (its step is all task logic)"]
    substep_us = 1e6 * r["ms_per_control_step"]["physics"] / 1e3 / p["substeps"] / r["num_envs"]
    return [f"physics: {p['nbody']} bodies, {p['ngeom']} geoms, {p['nv']} dofs; solver {p['solver']}, cone "
            f"{p['cone']}, {p['iterations']} iterations, {p['ls_iterations']} line-search iterations, integrator "
            f"{p['integrator']}, timestep {p['timestep']:g} s x {p['substeps']} substeps "
            f"({substep_us:.1f} us per world-substep)",
            f"physics size (mean over every world after each control step): {_fmt(p['mean_contacts'])} active "
            f"contacts, {_fmt(p['mean_constraint_rows'])} constraint rows (equality {_fmt(p['mean_equality_rows'])}, "
            f"joint friction {_fmt(p['mean_friction_rows'])}, limits {_fmt(p['mean_limit_rows'])}, the rest "
            f"contacts')"]


def _pair_lines(r: dict[str, Any], verbose: bool) -> list[str]:
    c = r.get("collision_pairs")
    if c is None:
        return []
    k = c["counts"]
    lines = [f"collision pairs checked by the broad phase: {c['checked']} (world {k['world']}, explicit "
             f"{k['explicit']}, other {k['other']}); skippable {c['skippable']} (parent-child {k['parent_child']}, "
             f"self {k['self']}, visual meshes {k['visual']}), of which {c['skippable_touched']} were in contact "
             f"in a probe rollout of {c['probe_worlds']} worlds"]
    s = r.get("skip_experiment")
    if s is not None:
        lines.append(f"skip experiment (bench-only copy without the skippable pairs, raw physics, medians of "
                     f"{s['repeats']} alternating pairs x {s['steps']} control steps): {s['as_is_ms']:.3f} ms as is, "
                     f"{s['skipped_ms']:.3f} ms skipped (per-pair ratio {s['ratio']:.2f}x, {s['ratio_min']:.2f}-"
                     f"{s['ratio_max']:.2f}); contacts {s['contacts_as_is']:.1f} "
                     f"-> {s['contacts_skipped']:.1f}")
    if verbose:
        lines += [f"  {p['kind']:12s} {'touched' if p['touched'] else '       '} {p['geom1']} -- {p['geom2']}"
                  for p in sorted(c["list"], key=lambda p: p["kind"])]
    return lines


def print_report(r: dict[str, Any], verbose: bool = False) -> None:
    load = ", ".join(f"{x:.2f}" for x in r["load_average"])
    print(f"{r['task']} on {r['device']}: {r['num_envs']} envs x {r['steps_per_env']} steps, {r['iterations']} "
          f"timed iteration(s) after {r['warmup']} warm-up; {r['samples_per_s']:,.0f} samples/s; load average "
          f"{load}")
    for line in _time_table(r) + _physics_lines(r) + _pair_lines(r, verbose):
        print(line)


def table_row(r: dict[str, Any]) -> str:
    """docs/benchmarks.md's row of one profile: samples/s, ms per control step of each part, contacts / rows,
    pairs, the skip experiment's ratio, the load average."""
    ms, p, c, s = r["ms_per_control_step"], r["physics"] or {}, r.get("collision_pairs"), r.get("skip_experiment")
    parts = " | ".join(f"{ms[k]:.1f}" for k in LABELS)
    size = f"{_fmt(p.get('mean_contacts'))} / {_fmt(p.get('mean_constraint_rows'))}" if p else "-"
    solver = f"{p['cone'].lower()}, {p['iterations']} it, {p['substeps']} x {p['timestep']:g} s" if p else "-"
    pairs = "-" if c is None else f"{c['checked']} ({c['skippable']})"
    skip = "-" if s is None else f"{s['ratio']:.2f}x ({s['ratio_min']:.2f}-{s['ratio_max']:.2f})"
    return (f"| {r['task']} | {r['num_envs']} | {r['samples_per_s']:,.0f} | {parts} | {size} | {solver} | {pairs} | "
            f"{skip} | {r['load_average'][0]:.1f} |")


if __name__ == "__main__":  # python -m bench.profile_report FILE.json ...: the docs table's rows of saved profiles
    import json
    import sys
    from pathlib import Path

    print("| task | envs | samples/s | physics | task logic | policy | bookkeeping | learning | contacts / rows | "
          "solver | pairs checked (skippable) | skip ratio | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in sys.argv[1:]:
        print(table_row(json.loads(Path(name).read_text())))
