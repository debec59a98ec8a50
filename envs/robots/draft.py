"""A RobotSpec drafted from a robot file alone (``tools.new_robot``, and ``menagerie:NAME`` without a reviewed
spec): every value found in the file, with a note saying where it came from.

- the pose: the file's standing keyframe (``home``, ``stand``, ... or its first), else its reference pose;
- the base: the body with the free joint;
- the feet: the lowest collision geoms at that pose (within FOOT_BAND of the lowest), one foot per body: a named
  geom by its name, an unnamed one by its class, type or index (``FootGeom``), several geoms as the body;
- trained joints: the chains from the base to each foot (a leg's), in the file's order; the others held at their
  keyframe angle (a waist, arms, a head), or welded when their name says hand, wrist or finger (WELDED);
- gains, effort limits and armature per group of joints with the same ones (``draft_gains.py``);
- base height, contact bodies, simulation options and, for a biped, the humanoid task's size-dependent settings.

One-line ``UserError`` when the file is not a floating-base legged robot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import mujoco

from contract.errors import UserError
from envs.robots.draft_gains import HOLD, RULE_NOTE, DraftGroup, draft_groups
from envs.robots.draft_pose import bent_legs, knee_angle, lowest_point
from envs.robots.patterns import covering_regex
from envs.robots.sides import has_twins, twins
from envs.robots.spec import FootGeom, HeldJoints, RobotSpec, SimOverrides, WeldedJoints

FOOT_BAND = 0.02
"""Collision geoms whose lowest point lies within this (m) of the robot's lowest are the feet's."""
DROP = 0.02
"""The base starts this far (m) above its standing height: a short drop onto the feet."""
KEYFRAMES = ("home", "stand", "standing", "init", "default")
"""Keyframe names taken as the standing pose, in this order (else the file's first keyframe)."""
WELDED = re.compile(r"wrist|hand|finger|thumb|palm|gripper|index|middle|ring|pinky|toe_", re.IGNORECASE)
"""Joints outside the legs whose name matches this are welded (they cost nothing); the others are held."""
TIMESTEP = 0.005
"""The task's physics step (s): 50 Hz control with its 4 substeps."""
ACTION_SCALE = 0.25
"""legged_gym's action scale (rad per unit of action)."""
HUMANOID_BASE_HEIGHT = 0.95
"""The built-in humanoid task's base height target (m), which its size-dependent settings are tuned to."""


@dataclass(frozen=True)
class Draft:
    """A drafted spec and where each value came from."""

    spec: RobotSpec
    kind: str
    """``quadruped`` (4 feet), ``biped`` (2 feet) or ``legged``."""
    notes: dict[str, str]
    """Spec field -> where its value came from."""
    groups: tuple[DraftGroup, ...]
    """The actuator groups, with their notes."""
    mirror_pairs: tuple[tuple[str, str], ...]
    """Left-right twins among the trained joints (left first); empty when the names follow no convention."""
    biped_env: dict[str, float | str] = field(default_factory=dict)
    """A biped's size-dependent task settings (``RewardParams`` fields and ``min_base_height``), scaled from the
    built-in humanoid's by its standing height."""
    keyframe: str = ""
    """The keyframe the pose came from ("" for a drafted bent-knee pose)."""
    guesses: tuple[str, ...] = ()
    """What the file did not say and the draft guessed (no keyframe, missing actuators, effort limits), one short
    phrase each: the summary line and the drafted file's docstring list them."""


@dataclass(frozen=True)
class _Model:
    """The robot file compiled on its own, at its standing pose."""

    spec: mujoco.MjSpec
    model: mujoco.MjModel
    data: mujoco.MjData
    bodies: list[str]
    joints: list[str]
    geoms: list[str]
    classes: list[str]
    keyframe: str


def _load(path: Path) -> _Model:
    try:
        spec = mujoco.MjSpec.from_file(str(path))
        m = spec.compile()
    except Exception as e:  # MuJoCo's parser / compiler message
        raise UserError(f"new robot: {path} does not compile: {' '.join(str(e).split())}") from None
    d = mujoco.MjData(m)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_KEY, k) or "" for k in range(m.nkey)]
    key = next((n for n in KEYFRAMES if n in names), names[0] if names else None)
    if key is not None:
        mujoco.mj_resetDataKeyframe(m, d, names.index(key))
    mujoco.mj_forward(m, d)
    classes = {g.id: g.classname.name for g in spec.geoms}

    def named(kind: mujoco.mjtObj, n: int) -> list[str]:
        return [mujoco.mj_id2name(m, kind, i) or "" for i in range(n)]

    return _Model(spec, m, d, named(mujoco.mjtObj.mjOBJ_BODY, m.nbody), named(mujoco.mjtObj.mjOBJ_JOINT, m.njnt),
                  named(mujoco.mjtObj.mjOBJ_GEOM, m.ngeom), [classes.get(g, "") for g in range(m.ngeom)], key or "")


def _colliding(f: _Model) -> list[int]:
    m = f.model
    return [g for g in range(m.ngeom) if (m.geom_contype[g] or m.geom_conaffinity[g]) and m.geom_bodyid[g] != 0]


def _bottom(f: _Model, g: int) -> float:
    """The lowest world z of geom ``g`` at the standing pose (its lowest point, not its bounding box's)."""
    return lowest_point(f.model, f.data, g)


def _base(f: _Model) -> int:
    m = f.model
    free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    if not free:
        raise UserError("new robot: the file has no free joint: not a floating-base robot (a legged robot's base "
                        "body carries a <freejoint/>)")
    return int(m.jnt_bodyid[free[0]])


def _feet(f: _Model) -> tuple[list[int], dict[int, list[int]]]:
    """Foot bodies (file order) and each one's lowest collision geoms."""
    colliding = _colliding(f)
    if not colliding:
        raise UserError("new robot: the file has no collision geom (contype / conaffinity): no feet to stand on")
    bottoms = {g: _bottom(f, g) for g in colliding}
    low = min(bottoms.values())
    per_body: dict[int, list[int]] = {}
    for g in colliding:
        if bottoms[g] <= low + FOOT_BAND:
            per_body.setdefault(int(f.model.geom_bodyid[g]), []).append(g)
    return sorted(per_body), per_body


def _foot_entries(f: _Model, feet: list[int], lowest: dict[int, list[int]]) -> tuple[dict, str]:
    """The spec's foot fields (``foot_geoms`` or ``foot_bodies``) and their note."""
    colliding = _colliding(f)
    picks: list[str | FootGeom] = []
    for b in feet:
        own = [g for g in colliding if f.model.geom_bodyid[g] == b]
        low = lowest[b]
        if len(low) > 1:
            return ({"foot_bodies": (covering_regex([f.bodies[x] for x in feet], f.bodies),)},
                    f"each foot is a body whose lowest collision geoms are several ({len(low)} on "
                    f"{f.bodies[b]}): a contact on any of its collision geoms is a step")
        g = low[0]
        if f.geoms[g]:
            picks.append(f.geoms[g])
        elif len(own) == 1:
            return ({"foot_bodies": (covering_regex([f.bodies[x] for x in feet], f.bodies),)},
                    "each foot is the one collision geom of its body")
        else:
            picks.append(_foot_geom(f, b, g, own))
    if all(isinstance(p, str) for p in picks):
        return {"foot_geoms": tuple(picks)}, "the lowest collision geom of each leg, by its name"
    return _merged(f, feet, picks)


def _foot_geom(f: _Model, body: int, g: int, own: list[int]) -> FootGeom:
    """The unnamed geom ``g`` of ``body`` by its class, else its type, else its index."""
    name = f.bodies[body]
    if f.classes[g] and sum(f.classes[x] == f.classes[g] for x in own) == 1:
        return FootGeom(name, geom_class=f.classes[g])
    gtype = mujoco.mjtGeom(int(f.model.geom_type[g])).name.removeprefix("mjGEOM_").lower()
    if sum(int(f.model.geom_type[x]) == int(f.model.geom_type[g]) for x in own) == 1:
        return FootGeom(name, type=gtype)
    return FootGeom(name, index=own.index(g))


def _merged(f: _Model, feet: list[int], picks: list[str | FootGeom]) -> tuple[dict, str]:
    """FootGeom picks of the same kind merged into one regex over their bodies."""
    kinds: dict[tuple, list[str]] = {}
    for p in picks:
        if isinstance(p, str):
            return ({"foot_bodies": (covering_regex([f.bodies[x] for x in feet], f.bodies),)},
                    "feet of mixed kinds: each foot is its body")
        kinds.setdefault((p.geom_class, p.type, p.index), []).append(p.body)
    entries = tuple(FootGeom(covering_regex(bodies, f.bodies), geom_class=k[0], type=k[1], index=k[2])
                    for k, bodies in kinds.items())
    how = ", ".join(f"class {k[0]!r}" if k[0] else f"type {k[1]!r}" if k[1] else f"index {k[2]}" for k in kinds)
    return ({"foot_geoms": entries}, f"the lowest collision geom of each leg is unnamed, one of several on its body: "
                                     f"picked by {how}")


def _chain(f: _Model, base: int, foot: int) -> list[int]:
    """Hinge / slide joints from the base down to the foot body (and below it), in the file's order."""
    m = f.model
    bodies = []
    b = foot
    while b not in (base, 0):
        bodies.append(b)
        b = int(m.body_parentid[b])
    below = [x for x in range(m.nbody) if _ancestor(m, foot, x) and x != foot]
    path = set(bodies) | set(below)
    hinge = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    return [j for j in range(m.njnt) if int(m.jnt_bodyid[j]) in path and int(m.jnt_type[j]) in hinge]


def _ancestor(m: mujoco.MjModel, a: int, b: int) -> bool:
    while b > 0:
        if b == a:
            return True
        b = int(m.body_parentid[b])
    return False


def _grouped(names: list[str], values: dict[str, float], among: list[str]) -> list[tuple[str, float]]:
    """(regex, angle) pairs: the joints of one angle under one short regex where one fits, file order."""
    by_value: dict[float, list[str]] = {}
    for n in names:
        by_value.setdefault(values[n], []).append(n)
    return [(covering_regex(members, among), value) for value, members in by_value.items()]


def _split_joints(f: _Model, base: int, feet: list[int]) -> tuple[list[str], list[str], list[str]]:
    """(trained, held, welded) joint names: the legs' chains, then the others."""
    m = f.model
    trained_ids: list[int] = []
    for foot in feet:
        trained_ids += [j for j in _chain(f, base, foot) if j not in trained_ids]
    others = [j for j in range(m.njnt) if m.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE and j not in trained_ids]
    unnamed = [j for j in trained_ids + others if not f.joints[j]]
    if unnamed:
        raise UserError(f"new robot: joint {unnamed[0]} (on body {f.bodies[m.jnt_bodyid[unnamed[0]]]!r}) has no name; "
                        "a spec picks joints by name")
    ball = [j for j in others if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL]
    welded = [f.joints[j] for j in others if WELDED.search(f.joints[j]) or j in ball]
    held = [f.joints[j] for j in others if f.joints[j] not in welded]
    return [f.joints[j] for j in trained_ids], held, welded


def _pose(f: _Model, names: list[str]) -> dict[str, float]:
    m = f.model
    return {n: round(float(f.data.qpos[m.jnt_qposadr[f.joints.index(n)]]), 4) + 0.0 for n in names}


def _contact_bodies(f: _Model, base: int, feet: list[int], foot_geoms: set[int]) -> tuple[list[str], list[str]]:
    """(termination, penalized) bodies: the base and the bodies off the legs; the legs' bodies but pure feet."""
    m = f.model
    colliding = _colliding(f)
    with_geoms = sorted({int(m.geom_bodyid[g]) for g in colliding})
    legs = {b for b in range(m.nbody) for foot in feet if _ancestor(m, b, foot) and b != base and _ancestor(m, base, b)}
    legs |= {b for b in range(m.nbody) for foot in feet if _ancestor(m, foot, b)}
    pure_feet = {b for b in with_geoms if all(g in foot_geoms for g in colliding if m.geom_bodyid[g] == b)}
    termination = [f.bodies[b] for b in with_geoms if b not in legs and b not in pure_feet]
    penalized = [f.bodies[b] for b in with_geoms if b in legs and b not in pure_feet]
    if f.bodies[base] not in termination:
        termination.insert(0, f.bodies[base])
    return termination, penalized


def _foot_geom_ids(f: _Model, feet: list[int], lowest: dict[int, list[int]], fields: dict) -> set[int]:
    if "foot_bodies" in fields:
        return {g for g in _colliding(f) if int(f.model.geom_bodyid[g]) in feet}
    return {g for b in feet for g in lowest[b]}


def draft(path: Path, name: str) -> Draft:
    """The spec drafted from the robot file at ``path`` (module docstring); ``name``: the spec's name."""
    f = _load(path)
    m = f.model
    base = _base(f)
    feet, lowest = _feet(f)
    if len(feet) < 2:
        raise UserError(f"new robot: {path}: one collision body is lowest ({f.bodies[feet[0]]!r}): no legs to "
                        "stand on (is the standing keyframe missing?)")
    foot_fields, foot_note = _foot_entries(f, feet, lowest)
    trained, held, welded = _split_joints(f, base, feet)
    kind = {4: "quadruped", 2: "biped"}.get(len(feet), "legged")
    if not f.keyframe:
        for j, angle in bent_legs(m, f.data, [_chain(f, base, foot) for foot in feet], kind).items():
            f.data.qpos[m.jnt_qposadr[j]] = angle
        mujoco.mj_forward(m, f.data)
    pose = _pose(f, trained + held + welded)
    named = [j for j in f.joints if j]
    low = min(_bottom(f, g) for g in _foot_geom_ids(f, feet, lowest, foot_fields))
    standing = float(f.data.qpos[m.jnt_qposadr[next(j for j in range(m.njnt) if m.jnt_bodyid[j] == base)] + 2]) - low
    termination, penalized = _contact_bodies(f, base, feet, _foot_geom_ids(f, feet, lowest, foot_fields))
    groups = draft_groups(f, trained, held)
    pairs = tuple((a, b) for a, b in zip(trained, twins(trained), strict=True) if a < b and a != b)
    sim = SimOverrides(timestep=TIMESTEP if abs(m.opt.timestep - TIMESTEP) > 1e-12 else None,
                       integrator="implicitfast" if m.opt.integrator == mujoco.mjtIntegrator.mjINT_EULER else None)
    spec = RobotSpec(
        name=name, mjcf=path, base_body=f.bodies[base], joints=tuple(trained),
        default_pose=tuple(_grouped(trained, pose, trained)), actuators=tuple(g.group for g in groups),
        base_height=round(standing + DROP, 2), action_scale=ACTION_SCALE,
        termination_contacts=tuple(covering_regex(termination, f.bodies) for _ in [0] if termination),
        penalized_contacts=tuple(covering_regex(penalized, f.bodies) for _ in [0] if penalized),
        held=tuple(HeldJoints(rx, v) for rx, v in _grouped(held, pose, named)),
        welded=tuple(WeldedJoints(rx, v) for rx, v in _grouped(welded, pose, named)), sim=sim, **foot_fields)
    notes = _notes(f, path, foot_note, len(trained), held, welded, standing, sim, m, kind)
    return Draft(spec, kind, notes, groups, pairs if has_twins(trained) else (),
                 _biped_env(trained, standing) if kind == "biped" else {}, f.keyframe,
                 _guesses(f, kind, groups))


def _guesses(f: _Model, kind: str, groups: tuple[DraftGroup, ...]) -> tuple[str, ...]:
    """What the draft guessed, for the summary line (short phrases)."""
    out = [] if f.keyframe else [f"no keyframe: knees bent {knee_angle(kind):.2f} rad (a pose to review)"]
    if not f.model.nu:
        legs = "of the legs 1 x effort limit, critically damped on the file's armature, the rest "
        out.append("no actuators in the file: kp, kd " + (legs if any(RULE_NOTE in g.note for g in groups) else "")
                   + "by rule from each joint's effort limit"
                   + (f" (held joints: at least {HOLD:g} x the weight they carry x its lever)"
                      if any("M g r" in g.note for g in groups) else ""))
    for word in ("missing actuator", "effort limit guessed"):
        hit = [g.group.joints for g in groups if word in g.note]
        if hit:
            out.append(f"{word} on {', '.join(hit)}"[:110])
    return tuple(out)


def _notes(f: _Model, path: Path, foot_note: str, n_trained: int, held: list[str], welded: list[str],
           standing: float, sim: SimOverrides, m: mujoco.MjModel, kind: str) -> dict[str, str]:
    pose = f"the file's keyframe {f.keyframe!r}" if f.keyframe else (
        f"GUESSED: the file has no keyframe; knees bent {knee_angle(kind):.2f} rad, the hinges above and below "
        "them by minus half (feet under the hips); review it or add a keyframe to the file")
    at = f"the file's keyframe {f.keyframe!r}" if f.keyframe else "the drafted pose (the file has no keyframe)"
    file_step = f"the file's {m.opt.timestep:g} s" if sim.timestep else "the file's"
    return {
        "base_body": "the body with the free joint",
        "joints": f"the {n_trained} joints on the chains from the base to the feet (legs), file order",
        "default_pose": f"{pose}",
        "actuators": "drafted per group of joints with the same values; each group says where they came from",
        "base_height": f"standing height at {at} ({standing:.3f} m, from the feet's lowest points) + {DROP} m: a "
                       "short drop onto the feet",
        "action_scale": f"legged_gym's {ACTION_SCALE} rad per unit of action",
        "feet": foot_note,
        "held": (f"{len(held)} joints off the legs, held by servos at {at}" if held else ""),
        "welded": (f"{len(welded)} hand / wrist / finger joints, welded at {at}" if welded else ""),
        "termination_contacts": "the base and the bodies off the legs with collision geoms",
        "penalized_contacts": "the legs' bodies with collision geoms (the feet's own geoms excepted)",
        "sim": (f"the task's {TIMESTEP} s steps (50 Hz control; {file_step})" if sim.timestep else "the file's steps")
               + ("; implicitfast: the file has MuJoCo's default Euler, which applies kd explicitly"
                  if sim.integrator else "") + "; the file's solver and contact settings",
    }


def _biped_env(trained: list[str], standing: float) -> dict[str, float | str]:
    """The built-in humanoid task's size-dependent settings scaled by this robot's standing height."""
    target = round(standing - 0.02, 3)
    scale = target / HUMANOID_BASE_HEIGHT
    hips = [j for j in trained if re.search(r"hip", j, re.IGNORECASE) and re.search(r"roll|yaw", j, re.IGNORECASE)]
    out: dict[str, float | str] = {
        "base_height_target": target, "feet_clearance_height": round(0.12 * scale, 3),
        "feet_min_distance": round(0.15 * scale, 3), "min_base_height": round(0.6 * scale, 3),
        "deviation_joints": covering_regex(hips, trained) if hips else ""}
    return out
